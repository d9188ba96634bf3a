package jupyterdoor

import (
	"errors"
	"math"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
)

// Errors of the door itself; every other error is the core's.
var (
	errNoKernelName  = errors.New("no such kernel name")
	errBadBody       = errors.New("the body is not the JSON this route takes")
	errNoSession     = errors.New("no such session")
	errTooManyJupSes = errors.New("too many Jupyter sessions for this tenant")
)

// statusOf is the HTTP status Jupyter clients expect for a core error
// kind. Jupyter answers a missing or bad token with 403.
func statusOf(k core.Kind) int {
	switch k {
	case core.KindInvalid:
		return http.StatusBadRequest
	case core.KindUnauthenticated, core.KindForbidden:
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
		return http.StatusGatewayTimeout
	case core.KindNotImplemented:
		return http.StatusNotImplemented
	case core.KindCanceled:
		return 499
	}
	return http.StatusInternalServerError
}

// fail writes err the way Jupyter Server writes its errors:
// {"message", "reason"}, reason being Paddock's stable code.
func fail(c *gin.Context, err error) {
	e := core.Classify(err)
	switch {
	case errors.Is(err, errNoKernelName), errors.Is(err, errBadBody):
		e = &core.Error{Kind: core.KindInvalid, Code: "invalid_request", Message: err.Error()}
	case errors.Is(err, errNoSession):
		e = &core.Error{Kind: core.KindNotFound, Code: "session_not_found", Message: err.Error()}
	case errors.Is(err, errTooManyJupSes):
		e = &core.Error{Kind: core.KindTooMany, Code: "too_many_sessions", Message: err.Error()}
	}
	if e.RetryAfter > 0 {
		c.Header("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
	}
	c.AbortWithStatusJSON(statusOf(e.Kind), gin.H{"message": e.Message, "reason": e.Code})
}
