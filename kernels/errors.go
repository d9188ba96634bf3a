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
	// ErrSessionLost means the session's kernel died and no fresh one
	// could be had; its state is gone. Only Get and Delete still work on
	// the session. The error is a *LostError, which says why.
	ErrSessionLost = errors.New("session lost")
	// ErrKernelRestarting means the session's kernel died during a call
	// other than a cell (a file, a command, a completion): the session goes
	// on with a fresh kernel, without the old one's state and files, and
	// the call may be retried on it.
	ErrKernelRestarting = errors.New("session kernel died; a fresh one replaces it")
	// ErrTooManySessions means the session table is full.
	ErrTooManySessions = errors.New("too many sessions")
	// ErrNoRoom means MaxLive sessions are awake and none is idle to
	// hibernate for one more (room.go); it comes with ErrTooManySessions.
	ErrNoRoom = errors.New("no room to keep one more session awake")
	// ErrInvalid wraps a request with a bad template, TTL or timeout.
	ErrInvalid = errors.New("invalid request")
	// ErrClosed means the manager is closed or closing.
	ErrClosed = errors.New("kernels closed")
)

// LostError is ErrSessionLost with its reason, in words fit for the
// client: how the kernel died and why no fresh one could be had.
type LostError struct {
	Session, Reason string
}

func (e *LostError) Error() string        { return fmt.Sprintf("session %s lost: %s", e.Session, e.Reason) }
func (e *LostError) Is(target error) bool { return target == ErrSessionLost }

// lostErr is s's ErrSessionLost; call it with Manager.mu held.
func lostErr(s *session) error { return &LostError{Session: s.id, Reason: s.lostWhy} }

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
