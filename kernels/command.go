package kernels

import (
	"context"
	"fmt"
	"time"

	"github.com/paddock-dev/paddock/policy"
	"github.com/paddock-dev/paddock/runner"
)

// Commands run beside the kernel, as file operations do: they never take
// the session's turn, so a command may run while a cell runs and a cell
// while commands run, as in E2B, where commands.run and runCode are
// independent calls on one sandbox. At most Config.MaxCommands run at once
// in a session (ErrTooManyCommands beyond). A Restart goes ahead of them and ends
// those still running (they end with runner.ReasonInterrupted). A running
// command keeps its session from expiring, like any call in progress.

// CommandOptions describe one command.
type CommandOptions struct {
	// Argv is the program and its arguments, as in runner.CommandRequest
	// (Argv[0] is an absolute path in the sandbox or a name on its PATH;
	// no shell unless Argv names one). Required.
	Argv []string
	// Env is added to the session's environment for this command.
	Env map[string]string
	// Dir is the working directory relative to the session's ("" is the
	// session's own); it may not lead out of it.
	Dir string
	// Timeout is the wall-time limit; zero means Config.DefaultTimeout,
	// at most Config.MaxTimeout.
	Timeout time.Duration
	// MaxOutput caps each stream in bytes; zero means Config.MaxOutput,
	// which is also the most it may ask for.
	MaxOutput int64
	// Started, when set, receives the command's PID in the sandbox once it
	// has started, before its output (runner.CommandRequest.Started).
	Started func(pid int)
}

// Command runs a command in the owner's session id, beside its kernel, as
// the sandbox's user under the session's limits. out, when non-nil,
// receives the command's output as it arrives, before Command returns. A
// command that fails is a result (runner.CommandResult: exit code,
// signal, reason, from the wait status the sandbox's agent saw). If ctx
// ends, the command is killed and Command returns ctx's error once it is
// over. A kernel that cannot run commands is runner.ErrNotSupported; a
// refused request is ErrInvalid, runner.ErrBadRequest or a
// *runner.FileError (its Dir).
func (m *Manager) Command(ctx context.Context, owner, id string, o CommandOptions, out runner.OutputFunc) (runner.CommandResult, error) {
	req, err := m.checkCommand(o)
	if err != nil {
		return runner.CommandResult{}, err
	}
	s, l, err := m.pinAwake(ctx, owner, id)
	if err != nil {
		return runner.CommandResult{}, err
	}
	defer m.unpin(s)
	c, ok := l.k.(runner.Commander)
	if !ok {
		return runner.CommandResult{}, fmt.Errorf("running a command in session %s: %w", s.id, runner.ErrNotSupported)
	}
	m.mu.Lock()
	if s.commands >= m.cfg.MaxCommands {
		n := s.commands
		m.mu.Unlock()
		return runner.CommandResult{}, fmt.Errorf("session %s: %d commands already running: %w", s.id, n, ErrTooManyCommands)
	}
	s.commands++
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		s.commands--
		m.mu.Unlock()
	}()
	res, err := c.Command(ctx, req, out)
	if err != nil && ctx.Err() != nil && !m.isClosed(s) {
		return res, fmt.Errorf("running a command in session %s: %w", s.id, ctx.Err())
	}
	return res, m.kernelErr(s, "running a command in", err)
}

// checkCommand turns o into the kernel's request, within the ranges.
func (m *Manager) checkCommand(o CommandOptions) (runner.CommandRequest, error) {
	if len(o.Argv) == 0 || o.Argv[0] == "" {
		return runner.CommandRequest{}, invalidf("a command is required")
	}
	timeout, err := m.checkTimeout(o.Timeout)
	if err != nil {
		return runner.CommandRequest{}, err
	}
	if err := policy.Optional("max_output_bytes", o.MaxOutput, m.cfg.MaxOutput, m.cfg.MaxOutput); err != nil {
		return runner.CommandRequest{}, invalid(err)
	}
	maxOut := o.MaxOutput
	if maxOut == 0 {
		maxOut = m.cfg.MaxOutput
	}
	return runner.CommandRequest{Argv: o.Argv, Env: o.Env, Dir: o.Dir, Timeout: timeout, MaxStdout: maxOut, MaxStderr: maxOut, Started: o.Started}, nil
}
