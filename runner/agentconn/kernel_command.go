package agentconn

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/wire"
)

// Commands beside a kernel (runner.Commander), for any runtime: the
// request, then the command's output and end, which dispatch routes here
// by the request's ID.

var _ runner.Commander = (*kernel)(nil)

// commandDrain is how long past its timeout the host waits for a
// command's end: the agent drains its output (at most a fraction of a
// second) after the kill.
const commandDrain = time.Second

// command is a command in progress, as dispatch sees it.
type command struct {
	end chan wire.CommandEnd
	// started is closed once Command has seen the command start (and
	// called its Started) or has returned: output waits for it.
	started   chan struct{}
	startOnce sync.Once

	mu     sync.Mutex
	out    runner.OutputFunc
	closed bool // Command returned: out is never called again
}

func (c *command) emit(stream runner.Stream, b []byte) {
	<-c.started
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed && c.out != nil {
		c.out(stream, b)
	}
}

func (c *command) markStarted() { c.startOnce.Do(func() { close(c.started) }) }

func (c *command) close() {
	c.markStarted()
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
}

// Command runs req beside the kernel's interpreter. If ctx ends first, the
// agent is asked to kill the command, and Command returns ctx's error once
// the command is over (or requestTimeout later).
func (k *kernel) Command(ctx context.Context, req runner.CommandRequest, out runner.OutputFunc) (runner.CommandResult, error) {
	if k.isLost() {
		return runner.CommandResult{}, runner.ErrKernelLost
	}
	id := k.nextID.Add(1)
	c := &command{end: make(chan wire.CommandEnd, 1), started: make(chan struct{}), out: out}
	k.mu.Lock()
	if k.cmds == nil {
		k.cmds = map[uint64]*command{}
	}
	k.cmds[id] = c
	k.mu.Unlock()
	defer func() {
		k.mu.Lock()
		delete(k.cmds, id)
		k.mu.Unlock()
		c.close()
	}()

	start := time.Now()
	msg := wire.Command{ID: id, Argv: req.Argv, Env: req.Env, Dir: req.Dir, TimeoutMS: req.Timeout.Milliseconds(),
		MaxStdout: req.MaxStdout, MaxStderr: req.MaxStderr}
	if err := ctx.Err(); err != nil {
		return runner.CommandResult{}, err
	}
	// The agent answers at once: the start is awaited even if ctx ends
	// meanwhile, so that a command that started is always killed and
	// waited for below.
	a, err := k.request(context.WithoutCancel(ctx), wire.TypeCommand, id, msg, requestTimeout)
	if err != nil {
		return runner.CommandResult{}, fmt.Errorf("starting a command in %s: %w", k.s.id, fileOpErr(err, runner.FileCommandDir, req.Dir))
	}
	res := runner.CommandResult{PID: a.PID}
	if req.Started != nil {
		req.Started(a.PID)
	}
	c.markStarted()
	// The agent kills at the timeout; the host gives it a little longer
	// before it gives up on the sandbox.
	var deadline <-chan time.Time
	if req.Timeout > 0 {
		t := time.NewTimer(req.Timeout + commandDrain + hostGrace)
		defer t.Stop()
		deadline = t.C
	}
	ctxDone := ctx.Done()
	var abandon <-chan time.Time
	for {
		select {
		case e := <-c.end:
			res.ExitCode, res.Signal, res.Reason = e.ExitCode, e.Signal, runner.Reason(e.Reason)
			res.StdoutTruncated, res.StderrTruncated = e.StdoutTruncated, e.StderrTruncated
			res.Exec = time.Since(start)
			return res, ctx.Err()
		case <-k.lost:
			return res, runner.ErrKernelLost
		case <-deadline:
			k.markLost("command outlived its deadline")
			_ = k.s.Destroy(ctx)
			return res, fmt.Errorf("command in %s did not end after its timeout: %w", k.s.id, runner.ErrKernelLost)
		case <-ctxDone:
			ctxDone = nil // ask once, then wait for its end
			k.killCommand(id)
			t := time.NewTimer(requestTimeout)
			defer t.Stop()
			abandon = t.C
		case <-abandon:
			return res, ctx.Err()
		}
	}
}

// killCommand asks the agent to kill command id; its end is the answer.
func (k *kernel) killCommand(id uint64) {
	payload, err := json.Marshal(wire.Request{ID: id})
	if err == nil {
		err = k.s.w.Write(wire.TypeCommandKill, payload)
	}
	if err != nil {
		k.s.log.Debug("asking to kill a command", "sandbox_id", k.s.id, "err", err)
	}
}

// routeCommand hands a command's output or end to its Command call.
func (k *kernel) routeCommand(fr wire.Frame) {
	var (
		id  uint64
		out wire.CommandOutput
		end wire.CommandEnd
	)
	switch fr.Type {
	case wire.TypeCommandOutput:
		var err error
		if out, err = wire.ParseCommandOutput(fr.Payload); err != nil {
			return
		}
		id = out.ID
	case wire.TypeCommandEnd:
		if json.Unmarshal(fr.Payload, &end) != nil {
			return
		}
		id = end.ID
	}
	k.mu.Lock()
	c := k.cmds[id]
	k.mu.Unlock()
	switch {
	case c == nil:
	case fr.Type == wire.TypeCommandOutput && out.Stream == wire.StreamStdout:
		c.emit(runner.Stdout, out.Data)
	case fr.Type == wire.TypeCommandOutput:
		c.emit(runner.Stderr, out.Data)
	default:
		select {
		case c.end <- end:
		default: // a second end: the first stands
		}
	}
}
