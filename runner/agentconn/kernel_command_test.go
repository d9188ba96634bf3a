package agentconn

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/wire"
)

// openKernel opens a kernel on a Conn whose agent is a fakeAgent.
func openKernel(t *testing.T) (runner.Kernel, *fakeAgent) {
	t.Helper()
	c, a := connect(t)
	return openKernelOn(t, c, a), a
}

// openKernelOn opens a kernel on c, whose agent a acknowledges it.
func openKernelOn(t *testing.T, c *Conn, a *fakeAgent) runner.Kernel {
	t.Helper()
	opened := make(chan runner.Kernel, 1)
	go func() {
		k, err := c.OpenKernel(t.Context(), runner.KernelOptions{})
		if err != nil {
			t.Errorf("OpenKernel: %v", err)
		}
		opened <- k
	}()
	var open wire.KernelOpen
	expectJSON(a, wire.TypeKernel, &open)
	a.send(wire.TypeAck, wire.Ack{ID: open.ID})
	return <-opened
}

// expectJSON reads the Conn's next frame, which must be of type typ, into v.
func expectJSON(a *fakeAgent, typ wire.Type, v any) {
	a.t.Helper()
	fr := a.expect(typ)
	if err := json.Unmarshal(fr.Payload, v); err != nil {
		a.t.Fatalf("decoding %c %s: %v", fr.Type, fr.Payload, err)
	}
}

// sendOutput sends a chunk of command id's output on stream.
func sendOutput(a *fakeAgent, id uint64, stream byte, s string) {
	a.t.Helper()
	if err := a.out.Write(wire.TypeCommandOutput, wire.AppendCommandOutput(nil, wire.CommandOutput{ID: id, Stream: stream, Data: []byte(s)})); err != nil {
		a.t.Fatal(err)
	}
}

// collected gathers a command's output as "stream:text" pieces.
type collected struct {
	mu sync.Mutex
	b  strings.Builder
}

func (c *collected) out(s runner.Stream, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.b.WriteString(string(s) + ":" + string(b) + ";")
}

func (c *collected) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.String()
}

type commandReturn struct {
	res runner.CommandResult
	err error
}

func goCommand(ctx context.Context, k runner.Kernel, req runner.CommandRequest, out runner.OutputFunc) <-chan commandReturn {
	ch := make(chan commandReturn, 1)
	go func() {
		res, err := k.(runner.Commander).Command(ctx, req, out)
		ch <- commandReturn{res, err}
	}()
	return ch
}

func TestCommandRoutesOutputAndEnd(t *testing.T) {
	k, a := openKernel(t)
	var out collected
	ret := goCommand(t.Context(), k, runner.CommandRequest{Argv: []string{"sh", "-c", "x"}, Env: map[string]string{"A": "1"}, Dir: "d",
		Timeout: 2 * time.Second, MaxStdout: 10, MaxStderr: 20, Started: func(pid int) { out.out("started", []byte(strconv.Itoa(pid))) }}, out.out)
	var req wire.Command
	expectJSON(a, wire.TypeCommand, &req)
	want := wire.Command{ID: req.ID, Argv: []string{"sh", "-c", "x"}, Env: map[string]string{"A": "1"}, Dir: "d", TimeoutMS: 2000, MaxStdout: 10, MaxStderr: 20}
	if b1, b2 := mustJSON(t, req), mustJSON(t, want); b1 != b2 {
		t.Errorf("request %s, want %s", b1, b2)
	}
	a.send(wire.TypeAck, wire.Ack{ID: req.ID, PID: 42})
	sendOutput(a, req.ID, wire.StreamStdout, "one")
	sendOutput(a, req.ID+100, wire.StreamStdout, "another command's")
	sendOutput(a, req.ID, wire.StreamStderr, "two")
	a.send(wire.TypeCommandEnd, wire.CommandEnd{ID: req.ID + 100, ExitCode: 9, Reason: "error"})
	a.send(wire.TypeCommandEnd, wire.CommandEnd{ID: req.ID, ExitCode: 143, Signal: 15, Reason: "killed", StderrTruncated: true})
	r := <-ret
	r.res.Exec = 0
	if want := (runner.CommandResult{PID: 42, ExitCode: 143, Signal: 15, Reason: runner.ReasonKilled, StderrTruncated: true}); r.err != nil || r.res != want {
		t.Errorf("Command = %+v, %v; want %+v", r.res, r.err, want)
	}
	if got := out.String(); got != "started:42;stdout:one;stderr:two;" {
		t.Errorf("output %q", got)
	}
}

func TestCommandRefusedDir(t *testing.T) {
	k, a := openKernel(t)
	ret := goCommand(t.Context(), k, runner.CommandRequest{Argv: []string{"pwd"}, Dir: "../x"}, nil)
	var req wire.Command
	expectJSON(a, wire.TypeCommand, &req)
	a.send(wire.TypeAck, wire.Ack{ID: req.ID, Error: "path escapes", BadRequest: true, Code: wire.FileErrBadPath})
	r := <-ret
	var fe *runner.FileError
	if !errors.As(r.err, &fe) || *fe != (runner.FileError{Op: runner.FileCommandDir, Path: "../x", Kind: runner.FileBadPath, Detail: "path escapes"}) {
		t.Errorf("Command = %v, want a bad_path FileError for the dir", r.err)
	}
}

// A caller that goes away has the agent kill the command; Command returns
// once its end arrives, and its output is never delivered after that.
func TestCommandCallerGone(t *testing.T) {
	k, a := openKernel(t)
	var out collected
	ctx, cancel := context.WithCancel(t.Context())
	ret := goCommand(ctx, k, runner.CommandRequest{Argv: []string{"sleep"}}, out.out)
	var req wire.Command
	expectJSON(a, wire.TypeCommand, &req)
	a.send(wire.TypeAck, wire.Ack{ID: req.ID, PID: 7})
	cancel()
	var kill wire.Request
	expectJSON(a, wire.TypeCommandKill, &kill)
	if kill.ID != req.ID {
		t.Errorf("kill names %d, want the command's %d", kill.ID, req.ID)
	}
	a.send(wire.TypeCommandEnd, wire.CommandEnd{ID: req.ID, ExitCode: 137, Signal: 9, Reason: "interrupted"})
	r := <-ret
	if !errors.Is(r.err, context.Canceled) || r.res.Reason != runner.ReasonInterrupted {
		t.Errorf("Command = %+v, %v; want interrupted and context.Canceled", r.res, r.err)
	}
	sendOutput(a, req.ID, wire.StreamStdout, "late")
	// A second command's round trip orders the late output before it.
	ret = goCommand(t.Context(), k, runner.CommandRequest{Argv: []string{"true"}}, nil)
	expectJSON(a, wire.TypeCommand, &req)
	a.send(wire.TypeAck, wire.Ack{ID: req.ID, PID: 8})
	a.send(wire.TypeCommandEnd, wire.CommandEnd{ID: req.ID, Reason: "ok"})
	if r := <-ret; r.err != nil {
		t.Fatal(r.err)
	}
	if got := out.String(); got != "" {
		t.Errorf("output delivered after Command returned: %q", got)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
