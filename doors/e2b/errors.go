package e2bdoor

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
)

// The door's own refusals, as core errors so that one mapping serves all.
func notFound(msg string) error {
	return &core.Error{Kind: core.KindNotFound, Code: "not_found", Message: msg}
}
func invalid(msg string) error {
	return &core.Error{Kind: core.KindInvalid, Code: "invalid_request", Message: msg}
}
func unauthorized(msg string) error {
	return &core.Error{Kind: core.KindUnauthenticated, Code: "unauthenticated", Message: msg}
}
func unsupported(msg string) error {
	return &core.Error{Kind: core.KindNotImplemented, Code: "not_implemented", Message: msg}
}

// sandboxNotFound is the one answer to an unknown sandbox, another
// tenant's, and an in-sandbox call whose access token is wrong: none of
// them learns whether the sandbox exists.
func sandboxNotFound(id string) error {
	return notFound("sandbox \"" + id + "\" not found")
}

// classify turns any error into the core's classification; the door's
// own refusals are already *core.Error.
func classify(err error) *core.Error {
	var ce *core.Error
	if errors.As(err, &ce) {
		return ce
	}
	return core.Classify(err)
}

// httpStatus is the status the E2B SDKs map for each kind: 404 is their
// NotFoundError, 401 AuthenticationError, 429 RateLimitError, 502
// TimeoutError, 503 and the rest SandboxError.
func httpStatus(k core.Kind) int {
	switch k {
	case core.KindInvalid:
		return http.StatusBadRequest
	case core.KindUnauthenticated:
		return http.StatusUnauthorized
	case core.KindForbidden:
		return http.StatusForbidden
	case core.KindNotFound:
		return http.StatusNotFound
	case core.KindConflict:
		return http.StatusConflict
	case core.KindGone:
		return http.StatusGone
	case core.KindTooLarge:
		return http.StatusRequestEntityTooLarge
	case core.KindTooMany:
		return http.StatusTooManyRequests
	case core.KindUnavailable:
		return http.StatusServiceUnavailable
	case core.KindTimeout:
		return http.StatusBadGateway
	case core.KindNotImplemented:
		return http.StatusNotImplemented
	case core.KindCanceled:
		return http.StatusRequestTimeout
	}
	return http.StatusInternalServerError
}

// apiError is E2B's error body.
type apiError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// fail answers err in E2B's shape {"code","message"} and stops the chain.
func fail(c *gin.Context, err error) {
	e := classify(err)
	status := httpStatus(e.Kind)
	setRetryAfter(c, e.RetryAfter)
	c.AbortWithStatusJSON(status, apiError{Code: status, Message: e.Message})
}

func setRetryAfter(c *gin.Context, d time.Duration) {
	if d > 0 {
		c.Header("Retry-After", strconv.Itoa(int((d+time.Second-1)/time.Second)))
	}
}
