package agent

import (
	"errors"

	"github.com/paddock-dev/paddock/runner/agent/workspace"
)

var (
	// ErrBadPath means a request's file path is not a clean relative path
	// inside the working directory.
	ErrBadPath = workspace.ErrBadPath
	// ErrBadRequest means a run request is malformed (negative limits,
	// NUL bytes in arguments or environment…).
	ErrBadRequest = errors.New("bad run request")
	// ErrNotReady means the interpreter never signalled that it finished its
	// warm-up and waits for code.
	ErrNotReady = errors.New("interpreter not ready")
	// ErrInterpreterGone means the pre-started interpreter exited before the
	// request reached it.
	ErrInterpreterGone = errors.New("interpreter exited before the run")
	// ErrUnsafeKill means there was no target the agent may safely kill.
	ErrUnsafeKill = errors.New("no safe kill target")
)

var (
	// ErrDriverProtocol means the interpreter sent a frame the agent cannot
	// accept on its report channel; the kernel is lost.
	ErrDriverProtocol = errors.New("driver protocol violation")
	// ErrKernelLost means the kernel's interpreter died or stopped answering.
	ErrKernelLost = errors.New("kernel lost")
	// ErrFileTooLarge means a file is larger than a read may return.
	ErrFileTooLarge = workspace.ErrFileTooLarge
	// ErrNotRegular means a read named a pipe, a socket or a device.
	ErrNotRegular = workspace.ErrNotRegular
	// ErrTooManyEntries means a directory holds more entries than a listing
	// may return.
	ErrTooManyEntries = workspace.ErrTooManyEntries
)
