package egress

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"
)

var loopback = netip.MustParseAddr("127.0.0.1")

// fakeResolver answers names from a map (keys without the final dot),
// or from answer when set, and counts its calls.
type fakeResolver struct {
	mu     sync.Mutex
	names  map[string][]netip.Addr
	answer func(ctx context.Context, call int, host string) ([]netip.Addr, error)
	calls  int
}

func (r *fakeResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	r.calls++
	call := r.calls
	r.mu.Unlock()
	name := host[:len(host)-1]
	if host[len(host)-1] != '.' {
		return nil, errors.New("the proxy asked for a relative name: " + host)
	}
	if r.answer != nil {
		return r.answer(ctx, call, name)
	}
	if a, ok := r.names[name]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func (r *fakeResolver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

// loopbackGuard lets the tests reach stand-ins on 127.0.0.1 and
// refuses everything else the default guard does.
func loopbackGuard() *Guard {
	return NewGuard(GuardConfig{Blocks: WithoutBlock(DefaultBlocks(), loopback), HostAddrs: hostIs()})
}

// logBuffer collects the proxy's log lines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// testProxy runs a proxy for cfg on 127.0.0.1 and returns it with its
// address; the test's cleanup closes it and waits for Serve to return.
// cfg's Guard defaults to loopbackGuard, its Logger to one into logs.
func testProxy(t *testing.T, cfg Config, setup ...func(*Proxy)) (*Proxy, string, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	if cfg.Guard == nil {
		cfg.Guard = loopbackGuard()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}
	if cfg.Sandbox == "" {
		cfg.Sandbox = "sbx-test"
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range setup {
		f(p)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Serve(ln) }()
	t.Cleanup(func() {
		_ = p.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	})
	return p, ln.Addr().String(), logs
}

// stand-in upstreams

// tcpUpstream runs serve on each connection to a listener on 127.0.0.1
// and returns its port.
func tcpUpstream(t *testing.T, serve func(net.Conn)) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { defer c.Close(); serve(c) })
		}
	})
	return ln.Addr().(*net.TCPAddr).Port
}

func echo(c net.Conn) { _, _ = io.Copy(c, c) }

// policyFor allows each rule with the given port.
func policyFor(t *testing.T, port int, hosts ...string) Policy {
	t.Helper()
	var rules []string
	for _, h := range hosts {
		rules = append(rules, h+":"+strconv.Itoa(port))
	}
	return mustPolicy(t, rules, nil)
}

// connect sends CONNECT target through the proxy at addr and returns
// the connection, a reader positioned after the answer, and the answer.
func connect(t *testing.T, addr, target string) (net.Conn, *bufio.Reader, *http.Response) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := io.WriteString(c, "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatalf("CONNECT %s: %v", target, err)
	}
	return c, br, resp
}

// rawRequest writes a request line and headers to the proxy and reads
// the answer with its body.
func rawRequest(t *testing.T, addr, head string) (*http.Response, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, head+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%q: %v", head, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// wantRefused checks an answer's status, reason header and body.
func wantRefused(t *testing.T, resp *http.Response, body string, status int, reason string) {
	t.Helper()
	if resp.StatusCode != status {
		t.Errorf("status %d, want %d (body %q)", resp.StatusCode, status, body)
	}
	if got := resp.Header.Get(RefusedHeader); got != reason {
		t.Errorf("%s: %q, want %q", RefusedHeader, got, reason)
	}
	if want := "egress refused: " + reason + ": "; len(body) < len(want) || body[:len(want)] != want {
		t.Errorf("body %q, want it to start %q", body, want)
	}
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// waitFor polls cond until it holds, failing the test after 10 s; for
// what the proxy finishes on its own goroutines after a client saw the end.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
