package mcpdoor

import (
	"io"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
)

// bridged connects a Go SDK client over pipes to Bridge, which relays to
// srv with token. done receives Bridge's error once it returns.
func bridged(t *testing.T, url, token string) (*mcp.ClientSession, <-chan error, error) {
	t.Helper()
	hostR, bridgeW := io.Pipe() // bridge → host
	bridgeR, hostW := io.Pipe() // host → bridge
	done := make(chan error, 1)
	go func() {
		done <- Bridge(t.Context(), BridgeOptions{URL: url, Token: token, In: bridgeR, Out: bridgeW})
		bridgeW.Close()
	}()
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.IOTransport{Reader: hostR, Writer: hostW}, nil)
	return cs, done, err
}

func TestBridge(t *testing.T) {
	f := &fakeCore{auth: true, closes: make(chan string, 1), run: func(c core.Caller, in core.RunInput) (core.RunResult, error) {
		return core.RunResult{Template: "python", Outcome: pool.Outcome{Result: runner.RunResult{Stdout: []byte(c.Tenant + "\n"), Reason: runner.ReasonOK}}}, nil
	}}
	srv := serve(t, f, Options{})
	cs, done, err := bridged(t, srv.URL+Path, "alice")
	if err != nil {
		t.Fatal(err)
	}
	res := call(t, cs, "run_code", map[string]any{"language": "python", "code": "x"})
	if !slices.Equal(texts(res), []string{"alice\n"}) {
		t.Fatalf("texts %q, want the tenant the token names", texts(res))
	}
	call(t, cs, "create_session", map[string]any{"language": "python"})
	// The host closing stdin ends the bridge, which ends the MCP session,
	// which closes the sessions it opened.
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("bridge: %v", err)
	}
	awaitClosed(t, f, "s0")
}

func TestBridgeRefused(t *testing.T) {
	srv := serve(t, &fakeCore{auth: true}, Options{})
	_, _, err := bridged(t, srv.URL+Path, "")
	want := `calling "initialize": paddock at ` + srv.URL + Path + `: sending "initialize": Unauthorized (HTTP 401: invalid_token: missing bearer token (send Authorization: Bearer <JWT>))`
	if err == nil || err.Error() != want {
		t.Fatalf("connecting without a token: %v\nwant %s", err, want)
	}
}
