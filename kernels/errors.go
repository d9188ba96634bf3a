package kernels

import (
	"errors"
	"fmt"
)

var (
	// ErrSessionNotFound means no session with that id belongs to the
	// caller: it never existed, expired, was deleted, or is another
	// owner's. The cases are not told apart.
	ErrSessionNotFound = errors.New("session not found")
	// ErrBusy means the session is running another execution and the
	// caller did not ask to queue, or the queue is full.
	ErrBusy = errors.New("session busy")
	// ErrTooManyCommands means the session already runs its maximum of
	// commands at once (Config.MaxCommands).
	ErrTooManyCommands = errors.New("too many commands running")
	// ErrSessionLost means the session's kernel died; its state is gone.
	// Only Get and Delete still work on the session.
	ErrSessionLost = errors.New("session lost")
	// ErrTooManySessions means the session table is full.
	ErrTooManySessions = errors.New("too many sessions")
	// ErrInvalid wraps a request with a bad template, TTL or timeout.
	ErrInvalid = errors.New("invalid request")
	// ErrClosed means the manager is closed or closing.
	ErrClosed = errors.New("kernels closed")
)

// invalidf returns an ErrInvalid whose text is the formatted message.
func invalidf(format string, args ...any) error {
	return &invalidError{msg: fmt.Sprintf(format, args...)}
}

// invalid returns an ErrInvalid that also wraps err (a policy range
// error) and reads as it.
func invalid(err error) error {
	return &invalidError{msg: err.Error(), err: err}
}

type invalidError struct {
	msg string
	err error
}

func (e *invalidError) Error() string        { return e.msg }
func (e *invalidError) Is(target error) bool { return target == ErrInvalid }
func (e *invalidError) Unwrap() error        { return e.err }
