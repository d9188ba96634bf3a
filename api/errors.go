package api

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/api/jobs"
	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
)

// statusClientClosedRequest is recorded (nginx's convention) when the
// client went away before the response.
const statusClientClosedRequest = 499

var (
	errBodyTooLarge = errors.New("request body too large")
	errNoRoute      = errors.New("no such route")
	errNoMethod     = errors.New("method not allowed")
	errPanic        = errors.New("handler panicked")
	errNoSessions   = errors.New("sessions disabled")
	errNoJobs       = errors.New("idempotency keys disabled")

	// Authentication: an *authError wraps one of these.
	errInvalidToken      = errors.New("invalid token")
	errInsufficientScope = errors.New("insufficient scope")
	// Token problems found while verifying; explain words them.
	errAlgorithm   = errors.New("signing algorithm not accepted")
	errCritHeader  = errors.New("unsupported crit header")
	errNoSubject   = errors.New("no subject")
	errLongSubject = errors.New("subject too long")
	errBadSubject  = errors.New("subject not printable text")

	// Per-tenant limits: a *limitError wraps one of the first three.
	errRateLimited    = errors.New("tenant request rate exceeded")
	errTooManyRuns    = errors.New("tenant runs in flight at the limit")
	errTenantSessions = errors.New("tenant sessions at the limit")
	errTooManyTenants = errors.New("tenant table full")
	// A client address over its failed authentications (a *limitError).
	errAuthFailures = errors.New("too many failed authentications")
)

// requestError is a request the API refuses; its message is shown as is.
type requestError struct {
	code    string
	message string
}

func (e *requestError) Error() string { return e.message }

func invalid(code, format string, args ...any) error {
	return &requestError{code: code, message: fmt.Sprintf(format, args...)}
}

// authError is a refused credential (errInvalidToken, 401) or a token
// that lacks scope (errInsufficientScope, 403); its message is shown as
// is and never carries key material.
type authError struct {
	err     error
	scope   string
	message string
}

func (e *authError) Error() string { return e.message }
func (e *authError) Unwrap() error { return e.err }

// limitError is a request over one of the tenant's limits.
type limitError struct {
	err        error
	limit      int
	retryAfter time.Duration
}

func (e *limitError) Error() string { return e.err.Error() }
func (e *limitError) Unwrap() error { return e.err }

// errorBody is the body of every error response.
type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// writeError writes the response describeError picks for err.
func (s *server) writeError(c *gin.Context, err error) {
	status, body := s.describeError(c, err)
	if status == statusClientClosedRequest {
		c.AbortWithStatus(status)
		return
	}
	writeJSON(c, status, body)
	c.Abort()
}

// describeError is the one place that turns an error into a status and a
// {code, message} body, setting the headers that go with them. 5xx bodies
// never carry the error's text. A streamed execution that already sent
// its 200 reports the same code and message in its end event.
func (s *server) describeError(c *gin.Context, err error) (int, errorBody) {
	var reqErr *requestError
	var authErr *authError
	var limErr *limitError
	var fileErr *runner.FileError
	switch {
	case errors.As(err, &authErr) && errors.Is(err, errInsufficientScope):
		c.Header("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope="%s"`, authErr.scope))
		return http.StatusForbidden, errorBody{"insufficient_scope", authErr.message}
	case errors.As(err, &authErr):
		c.Header("WWW-Authenticate", `Bearer error="invalid_token", error_description="`+quoteEscaper.Replace(authErr.message)+`"`)
		return http.StatusUnauthorized, errorBody{"invalid_token", authErr.message}
	case errors.As(err, &limErr):
		c.Header("Retry-After", strconv.Itoa(ceilSeconds(limErr.retryAfter)))
		return http.StatusTooManyRequests, s.describeLimit(limErr)
	case errors.Is(err, errTooManyTenants):
		c.Header("Retry-After", "60")
		return http.StatusServiceUnavailable, errorBody{"busy", "the server is serving too many tenants at once; retry later"}
	case errors.As(err, &reqErr):
		return http.StatusBadRequest, errorBody{reqErr.code, reqErr.message}
	case errors.Is(err, errBodyTooLarge):
		c.Header("Connection", "close") // the unread body is not drained
		return http.StatusRequestEntityTooLarge, errorBody{"body_too_large",
			fmt.Sprintf("request body exceeds %d bytes", s.cfg.MaxBodyBytes)}
	case errors.Is(err, errNoRoute):
		return http.StatusNotFound, errorBody{"not_found", "no such route"}
	case errors.Is(err, errNoMethod):
		return http.StatusMethodNotAllowed, errorBody{"method_not_allowed",
			fmt.Sprintf("method %s is not allowed here", c.Request.Method)}
	case errors.Is(err, errNoSessions):
		return http.StatusNotImplemented, errorBody{"not_implemented", "sessions are not enabled on this server"}
	case errors.Is(err, pool.ErrUnknownTemplate):
		return http.StatusBadRequest, errorBody{"unknown_template", "no sandbox template serves this language"}
	case errors.Is(err, kernels.ErrInvalid):
		return http.StatusBadRequest, errorBody{"invalid_request", err.Error()}
	case errors.Is(err, kernels.ErrSessionNotFound):
		return http.StatusNotFound, errorBody{"session_not_found", "no such session (it may have expired or been deleted)"}
	case errors.Is(err, kernels.ErrBusy):
		return http.StatusConflict, errorBody{"busy", `the session is running another execution (or its queue is full); ` +
			`retry when it ends, or send "queue": true to wait your turn`}
	case errors.Is(err, kernels.ErrSessionLost):
		return http.StatusConflict, errorBody{"session_lost", "the session's kernel died (out of memory, crashed or killed) " +
			"and its state is gone; delete the session and create a new one"}
	case errors.Is(err, kernels.ErrTooManySessions):
		c.Header("Retry-After", s.sessionRetryAfter())
		return http.StatusTooManyRequests, errorBody{"too_many_sessions", fmt.Sprintf(
			"the server holds its maximum of %d sessions; delete one of yours or retry later", s.kernels.Config().MaxSessions)}
	case errors.As(err, &fileErr) && knownFileKind(fileErr.Kind):
		return describeFileError(fileErr)
	case errors.Is(err, runner.ErrBadRequest):
		return http.StatusBadRequest, errorBody{"bad_request", err.Error()}
	case errors.Is(err, runner.ErrNotFound):
		return http.StatusNotFound, errorBody{"file_not_found", "no such file or directory in the session"}
	case errors.Is(err, runner.ErrNotSupported):
		return http.StatusNotImplemented, errorBody{"not_implemented", "this server's sandboxes cannot run sessions"}
	case errors.Is(err, pool.ErrBusy):
		c.Header("Retry-After", "1")
		return http.StatusServiceUnavailable, errorBody{"busy", "all run slots are busy; retry shortly"}
	case errors.Is(err, errNoJobs):
		return http.StatusNotImplemented, errorBody{"not_implemented", "this server does not keep idempotent runs"}
	case errors.Is(err, jobs.ErrInProgress):
		c.Header("Retry-After", "1")
		return http.StatusConflict, errorBody{"in_progress", "the run with this Idempotency-Key is still in flight; " +
			"retry after it ends to get its result"}
	case errors.Is(err, jobs.ErrKeyReused):
		return http.StatusUnprocessableEntity, errorBody{"idempotency_key_reused",
			"this Idempotency-Key was sent with a different request body; use a new key for a new request"}
	case errors.Is(err, jobs.ErrFull):
		c.Header("Retry-After", "1")
		return http.StatusServiceUnavailable, errorBody{"busy", "too many idempotent runs are in flight to record another; retry shortly"}
	case errors.Is(err, pool.ErrClosed), errors.Is(err, kernels.ErrClosed):
		return http.StatusServiceUnavailable, errorBody{"unavailable", "the server is shutting down"}
	case isContextErr(err) && c.Request.Context().Err() != nil:
		s.log.Info("client went away", "method", c.Request.Method, "path", c.Request.URL.Path, "error", err)
		return statusClientClosedRequest, errorBody{"client_closed_request", "the client went away"}
	}
	s.log.Error("request failed", "method", c.Request.Method, "path", c.Request.URL.Path, "error", err)
	return http.StatusInternalServerError, errorBody{"internal", "internal error"}
}

// describeLimit words a 429 for one of the tenant's limits.
func (s *server) describeLimit(e *limitError) errorBody {
	switch {
	case errors.Is(e, errRateLimited):
		return errorBody{"rate_limited", fmt.Sprintf("too many requests: each tenant may send %g per second "+
			"(bursts of %d); retry after the Retry-After seconds", s.cfg.TenantRate, e.limit)}
	case errors.Is(e, errAuthFailures):
		return errorBody{"too_many_auth_failures", fmt.Sprintf("too many failed authentications from your address "+
			"(at most %d per %d s); no token from it is checked until the Retry-After seconds have passed",
			e.limit, ceilSeconds(s.authFailures.window))}
	case errors.Is(e, errTooManyRuns):
		return errorBody{"too_many_runs", fmt.Sprintf("you have %d runs in flight, "+
			"the most one tenant may; retry when one finishes", e.limit)}
	}
	return errorBody{"too_many_sessions", fmt.Sprintf("you hold %d sessions, the most one tenant may; "+
		"delete one (or let one expire) and retry", e.limit)}
}

// sessionRetryAfter is when a session slot may have freed: the next reap.
func (s *server) sessionRetryAfter() string {
	secs := math.Ceil(s.kernels.Config().ReapInterval.Seconds())
	return strconv.Itoa(max(1, int(secs)))
}

// quoteEscaper makes text fit in a header's quoted-string.
var quoteEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

func (s *server) noRoute(c *gin.Context)  { s.writeError(c, errNoRoute) }
func (s *server) noMethod(c *gin.Context) { s.writeError(c, errNoMethod) }
