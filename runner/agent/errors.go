package agent

import "errors"

var (
	// ErrBadPath means a request's file path is not a clean relative path
	// inside the working directory.
	ErrBadPath = errors.New("bad file path")
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
