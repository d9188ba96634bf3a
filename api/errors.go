package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

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

// errorBody is the body of every error response.
type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// writeError is the one place that turns an error into a status and a
// {code, message} body. 5xx bodies never carry the error's text.
func (s *server) writeError(c *gin.Context, err error) {
	var (
		status int
		body   errorBody
		reqErr *requestError
	)
	switch {
	case errors.As(err, &reqErr):
		status, body = http.StatusBadRequest, errorBody{reqErr.code, reqErr.message}
	case errors.Is(err, errBodyTooLarge):
		c.Header("Connection", "close") // the unread body is not drained
		status, body = http.StatusRequestEntityTooLarge, errorBody{"body_too_large",
			fmt.Sprintf("request body exceeds %d bytes", s.cfg.MaxBodyBytes)}
	case errors.Is(err, errNoRoute):
		status, body = http.StatusNotFound, errorBody{"not_found", "no such route"}
	case errors.Is(err, errNoMethod):
		status, body = http.StatusMethodNotAllowed, errorBody{"method_not_allowed",
			fmt.Sprintf("method %s is not allowed here", c.Request.Method)}
	case errors.Is(err, pool.ErrUnknownTemplate):
		status, body = http.StatusBadRequest, errorBody{"unknown_template", "no sandbox template serves this language"}
	case errors.Is(err, runner.ErrBadRequest):
		status, body = http.StatusBadRequest, errorBody{"bad_request", err.Error()}
	case errors.Is(err, pool.ErrBusy):
		c.Header("Retry-After", "1")
		status, body = http.StatusServiceUnavailable, errorBody{"busy", "all run slots are busy; retry shortly"}
	case errors.Is(err, pool.ErrClosed):
		status, body = http.StatusServiceUnavailable, errorBody{"unavailable", "the server is shutting down"}
	case isContextErr(err) && c.Request.Context().Err() != nil:
		s.log.Info("client went away", "method", c.Request.Method, "path", c.Request.URL.Path, "error", err)
		c.AbortWithStatus(statusClientClosedRequest)
		return
	default:
		s.log.Error("request failed", "method", c.Request.Method, "path", c.Request.URL.Path, "error", err)
		status, body = http.StatusInternalServerError, errorBody{"internal", "internal error"}
	}
	writeJSON(c, status, body)
	c.Abort()
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

func (s *server) noRoute(c *gin.Context)  { s.writeError(c, errNoRoute) }
func (s *server) noMethod(c *gin.Context) { s.writeError(c, errNoMethod) }
