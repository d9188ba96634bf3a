package api

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/api/jobs"
	"github.com/paddock-dev/paddock/core"
)

// statusClientClosedRequest is recorded (nginx's convention) when the
// client went away before the response.
const statusClientClosedRequest = 499

// Errors of the HTTP layer itself; every other error is the core's.
var (
	errBodyTooLarge = errors.New("request body too large")
	errNoRoute      = errors.New("no such route")
	errNoMethod     = errors.New("method not allowed")
	errPanic        = errors.New("handler panicked")
	errNoJobs       = errors.New("idempotency keys disabled")

	// Authorization headers the core never sees a token in.
	errMissingBearer = errors.New("missing bearer token (send Authorization: Bearer <JWT>)")
	errNotBearer     = errors.New("the Authorization header must use the Bearer scheme")
)

// requestError is a request the API refuses before the core sees it (a
// body that is not the JSON it wants); its message is shown as is.
type requestError struct {
	code    string
	message string
}

func (e *requestError) Error() string { return e.message }

func invalid(code, format string, args ...any) error {
	return &requestError{code: code, message: fmt.Sprintf(format, args...)}
}

// errorBody is the body of every error response.
type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// kindStatus is the HTTP status of each kind of core error.
var kindStatus = map[core.Kind]int{
	core.KindInvalid:         http.StatusBadRequest,
	core.KindUnauthenticated: http.StatusUnauthorized,
	core.KindForbidden:       http.StatusForbidden,
	core.KindNotFound:        http.StatusNotFound,
	core.KindConflict:        http.StatusConflict,
	core.KindGone:            http.StatusConflict, // the session is still listed: 409, not 410
	core.KindTooLarge:        http.StatusRequestEntityTooLarge,
	core.KindTooMany:         http.StatusTooManyRequests,
	core.KindUnavailable:     http.StatusServiceUnavailable,
	core.KindTimeout:         http.StatusGatewayTimeout,
	core.KindNotImplemented:  http.StatusNotImplemented,
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
// {code, message} body, setting the headers that go with them: the HTTP
// layer's own errors here, the core's by their Kind. 5xx bodies never
// carry the error's text. A streamed execution that already sent its 200
// reports the same code and message in its end event.
func (s *server) describeError(c *gin.Context, err error) (int, errorBody) {
	var reqErr *requestError
	switch {
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
	}
	e := core.Classify(err)
	status, ok := kindStatus[e.Kind]
	switch {
	case e.Kind == core.KindCanceled && c.Request.Context().Err() != nil:
		s.log.Info("client went away", "method", c.Request.Method, "path", c.Request.URL.Path, "error", err)
		return statusClientClosedRequest, errorBody{e.Code, e.Message}
	case !ok: // internal, or a context error while the client is still there
		s.log.Error("request failed", "method", c.Request.Method, "path", c.Request.URL.Path, "error", cause(err))
		return http.StatusInternalServerError, errorBody{"internal", "internal error"}
	}
	if e.RetryAfter > 0 {
		c.Header("Retry-After", strconv.Itoa(ceilSeconds(e.RetryAfter)))
	}
	switch {
	case e.Code == "insufficient_scope":
		c.Header("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope="%s"`, e.Scope))
	case e.Kind == core.KindUnauthenticated:
		c.Header("WWW-Authenticate", `Bearer error="invalid_token", error_description="`+quoteEscaper.Replace(e.Message)+`"`)
	}
	return status, errorBody{e.Code, e.Message}
}

// cause is what a core error classifies, for the log.
func cause(err error) error {
	var e *core.Error
	if errors.As(err, &e) && e.Unwrap() != nil {
		return e.Unwrap()
	}
	return err
}

// ceilSeconds is d in whole seconds, rounded up, at least 1.
func ceilSeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

// quoteEscaper makes text fit in a header's quoted-string.
var quoteEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

func (s *server) noRoute(c *gin.Context)  { s.writeError(c, errNoRoute) }
func (s *server) noMethod(c *gin.Context) { s.writeError(c, errNoMethod) }
