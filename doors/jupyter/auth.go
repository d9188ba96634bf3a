package jupyterdoor

import (
	"errors"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/internal/edge"
)

// callerKey is where authenticate leaves the core.Caller.
const callerKey = "jupyter.caller"

var errScheme = errors.New(`the Authorization header must be "token <JWT>" or "Bearer <JWT>"`)

// authenticate maps Jupyter's token auth onto Paddock's JWTs: the token is
// the JWT, sent as "Authorization: token …" (Jupyter's scheme), "Bearer …",
// or ?token= (how browsers and @jupyterlab/services reach the WebSocket).
// Every request is charged to the tenant's rate bucket.
func (d *door) authenticate(c *gin.Context) {
	cl, err := d.svc.AuthenticateWith(core.PeerAddr(c.Request.RemoteAddr), doorName, func() (string, error) {
		return tokenOf(c)
	})
	if err == nil {
		err = d.svc.Admit(cl)
	}
	if err != nil {
		fail(c, err)
		return
	}
	c.Set(callerKey, cl)
	c.Next()
}

// tokenOf finds the request's token.
func tokenOf(c *gin.Context) (string, error) {
	if h := c.GetHeader("Authorization"); h != "" {
		tok, err := edge.Credential(h, "token", "Bearer")
		if err != nil {
			return "", errScheme
		}
		return tok, nil
	}
	if tok := c.Query("token"); tok != "" {
		return tok, nil
	}
	return "", errors.New(`missing token (send "Authorization: token <JWT>" or ?token=<JWT>)`)
}

func callerOf(c *gin.Context) core.Caller {
	v, _ := c.Get(callerKey)
	cl, _ := v.(core.Caller)
	return cl
}
