package core

import (
	"context"
	"strings"
	"time"

	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/policy"
	"github.com/paddock-dev/paddock/runner"
)

// CommandInput is a command to run in a session's sandbox, beside its
// kernel (E2B's commands.run): a program and its arguments, such as
// ["/bin/bash", "-l", "-c", "echo hi"]. It runs as the sandbox's user,
// under the session's limits, in its working directory (/workspace), with
// stdin at its end.
type CommandInput struct {
	// Argv is the program and its arguments. Required: Argv[0] is an
	// absolute path in the sandbox or a name on its PATH; no shell unless
	// Argv names one.
	Argv []string
	// Env is added to the session's environment for this command.
	Env map[string]string
	// Dir is the working directory, relative to the session's ("" or "."
	// is the session's own); it may not leave it ("..", an absolute path
	// or a symbolic link out are refused).
	Dir string
	// Timeout is the wall-time limit: 0 is the kernels' default, at most
	// their MaxTimeout. At the limit the command's process group is
	// killed (Reason "timeout").
	Timeout time.Duration
	// MaxOutputBytes caps each stream: 0 is the server's cap, which it may
	// not exceed. Past it the command is killed (Reason "output_limit").
	MaxOutputBytes int64
	// Started, when set, receives the command's PID in the sandbox once it
	// has started, before any of its output reaches out (E2B's start
	// event). It is not called when the command does not start.
	Started func(pid int)
}

// Command runs a command in the caller's session id, beside its kernel:
// it may run while a cell runs, a few at once (KindTooMany past the
// kernels' MaxCommands). out, when non-nil, receives its stdout and stderr
// as they arrive, before Command returns. A command that fails is a
// result: runner.CommandResult's ExitCode (128+Signal for a signal),
// Signal and Reason ("ok", "error", "killed", "timeout", "output_limit",
// "interrupted") are what the sandbox's agent saw when it reaped the
// process, never what the command printed. If ctx ends, the command is
// killed and the error is KindCanceled. Checks the "sessions" scope and
// every range, as the other session calls do.
func (s *Service) Command(ctx context.Context, c Caller, id string, in CommandInput, out runner.OutputFunc) (_ runner.CommandResult, err error) {
	defer func() { s.metrics.done(c.Door, "command", err) }()
	if err := s.sessionsFor(c); err != nil {
		return runner.CommandResult{}, err
	}
	opts, err := s.commandOptions(in)
	if err != nil {
		return runner.CommandResult{}, err
	}
	res, err := s.kernels.Command(ctx, c.Tenant, id, opts, out)
	if err != nil {
		return runner.CommandResult{}, s.fail(err)
	}
	return res, nil
}

// commandOptions checks in against the kernels' limits.
func (s *Service) commandOptions(in CommandInput) (kernels.CommandOptions, error) {
	var out kernels.CommandOptions
	switch {
	case len(in.Argv) == 0 || in.Argv[0] == "":
		return out, invalid("invalid_request", "argv must name a program to run (argv[0])")
	case len(in.Argv) > maxArgs:
		return out, invalid("invalid_request", "too many argv entries: %d (at most %d)", len(in.Argv), maxArgs)
	}
	for i, a := range in.Argv {
		if strings.IndexByte(a, 0) >= 0 {
			return out, invalid("invalid_request", "argv[%d] must not contain a NUL byte", i)
		}
	}
	out.Argv = in.Argv
	var err error
	if out.Env, err = checkEnv(in.Env); err != nil {
		return out, err
	}
	if in.Dir != "." {
		if _, err := checkSessionPath("dir", in.Dir, false); err != nil {
			return out, err
		}
	}
	out.Dir = in.Dir
	cfg := s.kernels.Config()
	if err := policy.Optional("timeout_ms", milliseconds(in.Timeout), cfg.MaxTimeout.Milliseconds(), cfg.DefaultTimeout.Milliseconds()); err != nil {
		return out, outOfRange(err)
	}
	out.Timeout = in.Timeout
	if err := policy.Optional("max_output_bytes", in.MaxOutputBytes, cfg.MaxOutput, -1); err != nil {
		return out, outOfRange(err)
	}
	out.MaxOutput = in.MaxOutputBytes
	out.Started = in.Started
	return out, nil
}
