package e2bdoor

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/internal/edge"
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
func httpStatus(k core.Kind) int { return edge.Status(k, e2bStatus) }

// e2bStatus is where the E2B SDKs read a kind differently: a timeout is
// their TimeoutError (502), and a caller that went away is a request
// timeout.
var e2bStatus = map[core.Kind]int{
	core.KindTimeout:  http.StatusBadGateway,
	core.KindCanceled: http.StatusRequestTimeout,
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
	edge.RetryAfter(c.Writer.Header(), e.RetryAfter)
	c.AbortWithStatusJSON(status, apiError{Code: status, Message: e.Message})
}
