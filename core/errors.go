package core

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
)

// templateBuildingRetry is the Retry-After of template_building: a root
// filesystem takes minutes to build.
const templateBuildingRetry = 10 * time.Second

// Kind is what an error means, whatever the door: each door maps it to
// its protocol (REST: an HTTP status).
type Kind int

const (
	KindInternal        Kind = iota // a fault of the server's; the message says nothing more
	KindInvalid                     // the request is wrong; the message says how
	KindUnauthenticated             // no, or a bad, credential
	KindForbidden                   // the credential lacks a scope, or the sandbox refused
	KindNotFound                    // no such session or file (for this tenant)
	KindConflict                    // the session is busy, or a file is in the way
	KindGone                        // the session's kernel died and its state with it
	KindTooLarge                    // what the request asked to store does not fit
	KindTooMany                     // over a limit; retry after RetryAfter
	KindUnavailable                 // the server is busy or shutting down
	KindTimeout                     // the operation ran out of time
	KindNotImplemented              // this server does not offer it
	KindCanceled                    // the caller went away
)

var kindNames = [...]string{"internal", "invalid", "unauthenticated", "forbidden", "not_found", "conflict",
	"gone", "too_large", "too_many", "unavailable", "timeout", "not_implemented", "canceled"}

func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return kindNames[k]
}

// Error is a Service error with its meaning: a Kind for the door to map,
// a stable machine-readable Code and a Message fit to show the client
// (never key material, never a sandbox's own text; KindInternal's says
// only "internal error").
type Error struct {
	Kind    Kind
	Code    string
	Message string
	// RetryAfter, when positive, is how long the client should wait.
	RetryAfter time.Duration
	// Scope is the scope a token lacks (Code "insufficient_scope").
	Scope string

	cause error
}

// Error is the message, safe to show.
func (e *Error) Error() string { return e.Message }

// Unwrap is the error this one classifies, for errors.Is and for logs.
func (e *Error) Unwrap() error { return e.cause }

// Sentinels the core's own errors wrap (errors.Is on a Service error).
var (
	ErrSessionsDisabled  = errors.New("sessions disabled")
	ErrInvalidToken      = errors.New("invalid token")
	ErrInsufficientScope = errors.New("insufficient scope")
	ErrRateLimited       = errors.New("tenant request rate exceeded")
	ErrTooManyRuns       = errors.New("tenant runs in flight at the limit")
	ErrTenantSessions    = errors.New("tenant sessions at the limit")
	ErrTooManyTenants    = errors.New("tenant table full")
	ErrAuthFailures      = errors.New("too many failed authentications")

	ErrTooManyConnections = errors.New("tenant connections at the limit")

	// Token problems found while verifying; explain words them.
	errAlgorithm   = errors.New("signing algorithm not accepted")
	errCritHeader  = errors.New("unsupported crit header")
	errNoSubject   = errors.New("no subject")
	errLongSubject = errors.New("subject too long")
	errBadSubject  = errors.New("subject not printable text")
)

// invalid is a KindInvalid error with the formatted message.
func invalid(code, format string, args ...any) *Error {
	return &Error{Kind: KindInvalid, Code: code, Message: fmt.Sprintf(format, args...)}
}

// outOfRange is a policy refusal as an invalid_request, with its message.
func outOfRange(err error) *Error {
	return &Error{Kind: KindInvalid, Code: "invalid_request", Message: err.Error(), cause: err}
}

// tooMany is a KindTooMany error over one of the limits.
func tooMany(sentinel error, code, message string, retryAfter time.Duration) *Error {
	return &Error{Kind: KindTooMany, Code: code, Message: message, RetryAfter: retryAfter, cause: sentinel}
}

// Classify returns the meaning of err: the *Error in its chain, or one
// made for a known sentinel of kernels, pool or runner, or KindInternal
// with the message "internal error" (err is its cause, for logs). It is
// nil for nil.
func Classify(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	e = classify(err)
	e.cause = err
	return e
}

func classify(err error) *Error {
	var fileErr *runner.FileError
	var saturated *pool.SaturatedError
	var unavailable *pool.UnavailableError
	switch {
	case errors.As(err, &unavailable) && unavailable.Failed:
		return &Error{Kind: KindUnavailable, Code: "template_unavailable",
			Message: fmt.Sprintf("the %s template's root filesystem could not be built (the server's log says why); the other templates still serve", unavailable.Template)}
	case errors.As(err, &unavailable):
		return &Error{Kind: KindUnavailable, Code: "template_building", RetryAfter: templateBuildingRetry,
			Message: fmt.Sprintf("the %s template's root filesystem is still being built, as on a server's first start; retry after %d s "+
				"(GET /readyz names the templates that serve now)", unavailable.Template, int(templateBuildingRetry.Seconds()))}
	case errors.Is(err, ErrTooManyTenants):
		return &Error{Kind: KindUnavailable, Code: "busy", RetryAfter: time.Minute,
			Message: "the server is serving too many tenants at once; retry later"}
	case errors.Is(err, ErrSessionsDisabled):
		return &Error{Kind: KindNotImplemented, Code: "not_implemented", Message: "sessions are not enabled on this server"}
	case errors.Is(err, pool.ErrUnknownTemplate):
		return &Error{Kind: KindInvalid, Code: "unknown_template", Message: "no sandbox template serves this language"}
	case errors.Is(err, kernels.ErrInvalid):
		return &Error{Kind: KindInvalid, Code: "invalid_request", Message: err.Error()}
	case errors.Is(err, kernels.ErrSessionNotFound):
		return &Error{Kind: KindNotFound, Code: "session_not_found", Message: "no such session (it may have expired or been deleted)"}
	case errors.Is(err, kernels.ErrBusy):
		return &Error{Kind: KindConflict, Code: "busy", Message: `the session is running another execution (or its queue is full); ` +
			`retry when it ends, or send "queue": true to wait your turn`}
	case errors.Is(err, kernels.ErrTooManyCommands):
		return &Error{Kind: KindTooMany, Code: "too_many_commands", RetryAfter: time.Second,
			Message: "the session runs its maximum of commands at once; retry when one ends"}
	case errors.Is(err, kernels.ErrSessionLost):
		return &Error{Kind: KindGone, Code: "session_lost", Message: lostMessage(err)}
	case errors.Is(err, kernels.ErrKernelRestarting):
		return &Error{Kind: KindConflict, Code: "kernel_restarting", Message: "the session's kernel died during this call and a fresh one " +
			"replaces it (variables and files are gone); retry the call"}
	case errors.Is(err, kernels.ErrHibernationOff):
		return &Error{Kind: KindNotImplemented, Code: "hibernation_off",
			Message: "this server does not hibernate sessions (it has no directory for their images, or its runtime cannot save sandboxes)"}
	case errors.Is(err, kernels.ErrCheckpointNotFound):
		return &Error{Kind: KindNotFound, Code: "checkpoint_not_found", Message: "the session keeps no checkpoint of that name"}
	case errors.Is(err, kernels.ErrCannotFork):
		return &Error{Kind: KindConflict, Code: "fork_unsupported",
			Message: "this session's interpreter cannot be forked: its random generator cannot be reseeded (Node's), so its clones would draw the same numbers"}
	case errors.Is(err, kernels.ErrNoRoom):
		return &Error{Kind: KindTooMany, Code: "too_many_sessions", RetryAfter: time.Second,
			Message: "the server keeps its maximum of sessions awake (--max-live-sessions) and none of them is idle to hibernate to make room; retry when a cell ends"}
	case errors.Is(err, kernels.ErrTooManySessions):
		return &Error{Kind: KindTooMany, Code: "too_many_sessions", RetryAfter: time.Second,
			Message: "the server holds its maximum of sessions; delete one of yours or retry later"}
	case errors.As(err, &fileErr) && knownFileKind(fileErr.Kind):
		return describeFileError(fileErr)
	case errors.Is(err, runner.ErrBadRequest):
		return &Error{Kind: KindInvalid, Code: "bad_request", Message: err.Error()}
	case errors.Is(err, runner.ErrNotFound):
		return &Error{Kind: KindNotFound, Code: "file_not_found", Message: "no such file or directory in the session"}
	case errors.Is(err, runner.ErrNotSupported):
		return &Error{Kind: KindNotImplemented, Code: "not_implemented", Message: "this server's sandboxes cannot run sessions"}
	case errors.As(err, &saturated):
		return &Error{Kind: KindUnavailable, Code: "saturated", RetryAfter: saturated.RetryAfter,
			Message: fmt.Sprintf("the server is saturated: no sandbox was free within the queue deadline; retry after %d s",
				int(math.Ceil(saturated.RetryAfter.Seconds())))}
	case errors.Is(err, pool.ErrClosed), errors.Is(err, kernels.ErrClosed):
		return &Error{Kind: KindUnavailable, Code: "unavailable", Message: "the server is shutting down"}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return &Error{Kind: KindCanceled, Code: "client_closed_request", Message: "the client went away"}
	}
	return &Error{Kind: KindInternal, Code: "internal", Message: "internal error"}
}

// lostMessage says why a session is lost: its kernel died and no fresh
// one could be had. The reason is the kernels' own wording, never a
// sandbox's.
func lostMessage(err error) string {
	why := "out of memory, crashed or killed, and no fresh kernel could be had"
	var lost *kernels.LostError
	if errors.As(err, &lost) && lost.Reason != "" {
		why = lost.Reason
	}
	return "the session's kernel died and its state is gone (" + why + "); delete the session and create a new one"
}

// fail classifies err as Classify does, wording what depends on this
// service's configuration (the session table's size and reap interval).
func (s *Service) fail(err error) error {
	if err == nil {
		return nil
	}
	e := Classify(err)
	if e.Code == "too_many_sessions" && errors.Is(err, kernels.ErrTooManySessions) && s.kernels != nil {
		kc := s.kernels.Config()
		e = &Error{Kind: KindTooMany, Code: e.Code, RetryAfter: max(kc.ReapInterval, time.Second), cause: err,
			Message: fmt.Sprintf("the server holds its maximum of %d sessions; delete one of yours or retry later", kc.MaxSessions)}
	}
	if e.Code == "too_many_commands" && s.kernels != nil {
		e = &Error{Kind: KindTooMany, Code: e.Code, RetryAfter: e.RetryAfter, cause: err,
			Message: fmt.Sprintf("the session runs its maximum of %d commands at once; retry when one ends", s.kernels.Config().MaxCommands)}
	}
	return e
}
