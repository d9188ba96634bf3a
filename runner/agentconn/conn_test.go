package agentconn

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/wire"
)

// fakeAgent is the agent's end of a Conn's three pipes, driven by a test.
type fakeAgent struct {
	t     *testing.T
	in    *wire.Reader // what the Conn sends
	out   *wire.Writer // frames to the Conn
	outW  io.Closer    // closing it is the agent dying
	logW  io.Closer
	kills atomic.Int32 // what the OOMKills hook reports
	gone  atomic.Int32 // Destroy hook calls
}

// connect makes a Conn whose agent is the returned fake.
func connect(t *testing.T) (*Conn, *fakeAgent) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	logR, logW := io.Pipe()
	a := &fakeAgent{t: t, in: wire.NewReader(inR), out: wire.NewWriter(outW), outW: outW, logW: logW}
	c := New("pd-test", inW, outR, logR, Hooks{
		Destroy: func(ctx context.Context) error {
			a.gone.Add(1)
			return errors.Join(inR.Close(), outW.Close(), logW.Close())
		},
		OOMKills: func() int { return int(a.kills.Load()) },
	})
	t.Cleanup(func() { _ = c.Destroy(context.Background()) })
	return c, a
}

func (a *fakeAgent) send(typ wire.Type, v any) {
	a.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		a.t.Fatal(err)
	}
	if err := a.out.Write(typ, b); err != nil {
		a.t.Error(err)
	}
}

// expect reads the Conn's next frame and checks its type.
func (a *fakeAgent) expect(typ wire.Type) wire.Frame {
	a.t.Helper()
	fr, err := a.in.Read()
	if err != nil || fr.Type != typ {
		a.t.Errorf("agent read %c, %v; want %c", fr.Type, err, typ)
	}
	return fr
}

func TestConnHandshakeRunAndDestroy(t *testing.T) {
	c, a := connect(t)
	go func() {
		a.send(wire.TypeHello, wire.Hello{Version: wire.Version, Language: "python"})
		ping := a.expect(wire.TypePing)
		_ = a.out.Write(wire.TypePing, ping.Payload)
		var run wire.Run
		_ = json.Unmarshal(a.expect(wire.TypeRun).Payload, &run)
		_ = a.out.Write(wire.TypeStdout, []byte(run.Code))
		_ = a.out.Write(wire.TypeStderr, []byte("warning"))
		a.send(wire.TypeExit, wire.Exit{ExitCode: 1, Reason: "error", LimitsReached: []string{"processes"}})
	}()
	if err := c.Handshake(t.Context(), "python"); err != nil {
		t.Fatalf("Handshake: %v", err)
	}
	var streamed []string
	res, err := c.Run(t.Context(), runner.RunRequest{Code: "print(1)", Timeout: time.Minute, MaxStdout: 5, MaxStderr: 100},
		func(s runner.Stream, chunk []byte) { streamed = append(streamed, string(s)+":"+string(chunk)) })
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if string(res.Stdout) != "print" || !res.StdoutTruncated || string(res.Stderr) != "warning" || res.ExitCode != 1 ||
		res.Reason != runner.ReasonError || !slices.Equal(res.LimitsReached, []string{"processes"}) {
		t.Errorf("result %+v", res)
	}
	if want := []string{"stdout:print", "stderr:warning"}; !slices.Equal(streamed, want) {
		t.Errorf("streamed %q, want %q", streamed, want)
	}
	if _, err := c.Run(t.Context(), runner.RunRequest{}, nil); !errors.Is(err, runner.ErrUsed) {
		t.Errorf("second Run: %v, want ErrUsed", err)
	}
	if err := c.Destroy(t.Context()); err != nil {
		t.Errorf("Destroy: %v", err)
	}
	_ = c.Destroy(t.Context())
	<-c.Done()
	if n := a.gone.Load(); n != 1 {
		t.Errorf("the runtime's Destroy ran %d times, want 1", n)
	}
}

// A sandbox that dies mid-run died of memory when its cgroup counted an
// OOM kill, and of something else otherwise; an agent verdict of killed
// is refined the same way.
func TestConnReasonsReadTheOOMHook(t *testing.T) {
	tests := []struct {
		name  string
		kills int32
		exit  *wire.Exit // nil: the agent dies instead
		want  runner.Reason
	}{
		{name: "death, oom kill", kills: 1, want: runner.ReasonOOM},
		{name: "death, none", kills: 0, want: runner.ReasonSandboxError},
		{name: "killed, oom kill", kills: 2, exit: &wire.Exit{ExitCode: 137, Reason: "killed"}, want: runner.ReasonOOM},
		{name: "killed, none", kills: 0, exit: &wire.Exit{ExitCode: 137, Reason: "killed"}, want: runner.ReasonKilled},
		{name: "timeout stays", kills: 1, exit: &wire.Exit{ExitCode: 137, Reason: "timeout"}, want: runner.ReasonTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, a := connect(t)
			a.kills.Store(tt.kills)
			go func() {
				a.expect(wire.TypeRun)
				if tt.exit == nil {
					_ = a.outW.Close()
					return
				}
				a.send(wire.TypeExit, *tt.exit)
			}()
			res, err := c.Run(t.Context(), runner.RunRequest{Code: "x", Timeout: time.Minute}, nil)
			if err != nil || res.Reason != tt.want {
				t.Errorf("Run = %+v, %v; want reason %s", res, err, tt.want)
			}
		})
	}
}
