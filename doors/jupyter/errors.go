package jupyterdoor

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/internal/edge"
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
	return edge.Status(k, map[core.Kind]int{core.KindUnauthenticated: http.StatusForbidden})
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
	edge.RetryAfter(c.Writer.Header(), e.RetryAfter)
	c.AbortWithStatusJSON(statusOf(e.Kind), gin.H{"message": e.Message, "reason": e.Code})
}
