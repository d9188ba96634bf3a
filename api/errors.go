package api

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/api/jobs"
	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/internal/edge"
)

// statusClientClosedRequest is recorded (nginx's convention) when the
// client went away before the response.
const statusClientClosedRequest = edge.StatusClientClosedRequest

// Errors of the HTTP layer itself; every other error is the core's.
var (
	errBodyTooLarge = errors.New("request body too large")
	errNoRoute      = errors.New("no such route")
	errNoMethod     = errors.New("method not allowed")
	errPanic        = errors.New("handler panicked")
	errNoJobs       = errors.New("idempotency keys disabled")
	// errJobsUnavailable: the job store failed to claim a key.
	errJobsUnavailable = errors.New("job store unavailable")

	// Authorization headers the core never sees a token in.
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

// kindStatus is where /v1 reads a kind of core error differently from
// the other doors: a lost session is still listed, so 409, not 410.
var kindStatus = map[core.Kind]int{core.KindGone: http.StatusConflict}

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
	case errors.Is(err, errJobsUnavailable):
		c.Header("Retry-After", "5")
		return http.StatusServiceUnavailable, errorBody{"jobs_unavailable", "the store of idempotent runs did not answer, so nothing ran; " +
			"retry shortly, or send the run without an Idempotency-Key"}
	case errors.Is(err, jobs.ErrFull):
		c.Header("Retry-After", "1")
		return http.StatusServiceUnavailable, errorBody{"busy", "too many idempotent runs are in flight to record another; retry shortly"}
	}
	e := core.Classify(err)
	status := edge.Status(e.Kind, kindStatus)
	switch {
	case e.Kind == core.KindCanceled && c.Request.Context().Err() != nil:
		s.log.Info("client went away", "method", c.Request.Method, "path", c.Request.URL.Path, "error", err)
		return statusClientClosedRequest, errorBody{e.Code, e.Message}
	case status == http.StatusInternalServerError || e.Kind == core.KindCanceled: // internal, or a context error while the client is still there
		s.log.Error("request failed", "method", c.Request.Method, "path", c.Request.URL.Path, "error", cause(err))
		return http.StatusInternalServerError, errorBody{"internal", "internal error"}
	}
	edge.RetryAfter(c.Writer.Header(), e.RetryAfter)
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

// quoteEscaper makes text fit in a header's quoted-string.
var quoteEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

func (s *server) noRoute(c *gin.Context)  { s.writeError(c, errNoRoute) }
func (s *server) noMethod(c *gin.Context) { s.writeError(c, errNoMethod) }
