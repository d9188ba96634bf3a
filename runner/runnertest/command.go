package runnertest

import (
	"context"
	"fmt"
	"strings"

	"github.com/paddock-dev/paddock/runner"
)

// CommandFunc replaces Kernel.Command's default. Its ctx ends when the
// caller's does and when the kernel is lost.
type CommandFunc func(ctx context.Context, req runner.CommandRequest, out runner.OutputFunc) (runner.CommandResult, error)

var _ runner.Commander = (*Kernel)(nil)

// Command runs req with CommandFunc or, by default, a tiny shell that
// calls req.Started with its PID (100 + the number of commands so far),
// then: "echo" prints its arguments, "false" exits 1, anything else exits 0 and prints
// nothing. An empty Argv is runner.ErrBadRequest; an absolute Dir or one
// with a ".." component is a runner.FileError, as the agent would say.
// Commands may run while a cell runs and never count as overlaps.
func (k *Kernel) Command(ctx context.Context, req runner.CommandRequest, out runner.OutputFunc) (runner.CommandResult, error) {
	if k.isLost() {
		return runner.CommandResult{}, k.lostErr()
	}
	k.mu.Lock()
	k.commands = append(k.commands, req)
	k.mu.Unlock()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-k.lost:
			cancel(runner.ErrKernelLost)
		case <-ctx.Done():
		}
	}()
	if k.CommandFunc != nil {
		return k.CommandFunc(ctx, req, out)
	}
	if len(req.Argv) == 0 {
		return runner.CommandResult{}, fmt.Errorf("fake kernel: no program: %w", runner.ErrBadRequest)
	}
	if req.Dir != "" && req.Dir != "." {
		if _, err := cleanPath(runner.FileCommandDir, req.Dir); err != nil {
			return runner.CommandResult{}, err
		}
	}
	res := runner.CommandResult{PID: 100 + len(k.Commands()), Reason: runner.ReasonOK, Exec: FakeExec}
	if req.Started != nil {
		req.Started(res.PID)
	}
	switch req.Argv[0] {
	case "echo":
		if out != nil {
			out(runner.Stdout, []byte(strings.Join(req.Argv[1:], " ")+"\n"))
		}
	case "false":
		res.ExitCode, res.Reason = 1, runner.ReasonError
	}
	return res, nil
}

// Commands returns the requests Command received, in order.
func (k *Kernel) Commands() []runner.CommandRequest {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]runner.CommandRequest(nil), k.commands...)
}
