package runner

import (
	"context"
	"time"
)

// Commander is the optional ability of a Kernel to run a command (a
// program with its arguments, such as /bin/bash -l -c "echo hi") in its
// sandbox, beside the interpreter: as the sandbox's user, under the
// sandbox's limits, with the kernel's working directory and files. Find it
// by type assertion on a Kernel.
//
// Commands may run while a cell runs, and several at once. How a command
// ended is what the in-sandbox agent saw when it reaped the process,
// never anything the command printed. A command's process group is killed
// when it ends, at its timeout, past its output cap and when ctx ends
// (Command then returns ctx's error once the command is over); processes
// that left the group live on until the sandbox ends. A kernel's Restart
// and loss kill every user process, commands included.
type Commander interface {
	// Command runs req once. out, when non-nil, receives the command's
	// output as it arrives, in order per stream, before Command returns.
	// A command that fails is a result; err != nil means it could not be
	// run: ErrBadRequest (an empty or malformed argv or environment, a
	// program that is not there), a *FileError for Dir (Op FileCommandDir),
	// ErrKernelLost, or ctx's error.
	Command(ctx context.Context, req CommandRequest, out OutputFunc) (CommandResult, error)
}

// CommandRequest is one command.
type CommandRequest struct {
	// Argv is the program and its arguments. Argv[0] is an absolute path
	// in the sandbox or a name looked up on the sandbox's PATH. No shell
	// is involved unless Argv names one.
	Argv []string
	// Env is added to the kernel's environment (which has PATH, HOME,
	// LANG and the session's variables).
	Env map[string]string
	// Dir is the working directory, relative to the kernel's ("" is the
	// kernel's own). It may not lead out of it, by ".." or a symbolic
	// link. The command itself may change directory as the sandbox's user
	// may.
	Dir string
	// Timeout is the wall-time limit; zero means none. At the limit the
	// command's process group is killed (ReasonTimeout).
	Timeout time.Duration
	// MaxStdout and MaxStderr cap each stream in bytes (zero: the
	// runtime's default); past a cap the command's process group is
	// killed (ReasonOutputLimit) and the stream is truncated.
	MaxStdout int64
	MaxStderr int64
	// Started, when set, is called once with the command's PID inside the
	// sandbox as soon as it has started, before any of its output reaches
	// out (E2B's start event). It is not called for a command that did
	// not start.
	Started func(pid int)
}

// CommandResult is how a command ended.
type CommandResult struct {
	// PID is the command's process ID inside the sandbox.
	PID int
	// ExitCode is the exit status, or 128+Signal when a signal ended it.
	ExitCode int
	// Signal is the signal that ended the command, or 0 when it exited.
	Signal int
	// Reason is ReasonOK, ReasonError (a non-zero exit), ReasonKilled (a
	// signal Paddock did not send), ReasonTimeout, ReasonOutputLimit, or
	// ReasonInterrupted (its caller went away).
	Reason          Reason
	StdoutTruncated bool
	StderrTruncated bool
	// Exec is the time from the request to the command's end, measured on
	// the host.
	Exec time.Duration
}

// FileCommandDir is the FileOp of a command's refused working directory.
const FileCommandDir FileOp = "command dir"
