package api

import (
	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/internal/edge"
)

// The REST door's name, in the core's metrics and logs.
const door = edge.REST

// Gin context keys set by authenticate.
const (
	keyTenant = "tenant" // also a request log attribute
	keyCaller = "paddock.caller"
)

// authenticate has the core check the bearer token and records the
// caller, and its tenant for the request log. With auth off every request
// is the anonymous tenant "" with every scope.
func (s *server) authenticate(c *gin.Context) {
	caller, err := s.core.AuthenticateWith(core.PeerAddr(c.Request.RemoteAddr), door, func() (string, error) {
		return edge.Bearer(c.GetHeader("Authorization"))
	})
	if err != nil {
		s.writeError(c, err)
		return
	}
	c.Set(keyTenant, caller.Tenant)
	c.Set(keyCaller, caller)
}

// requireScope refuses, with 403 insufficient_scope, a token that does
// not grant scope.
func (s *server) requireScope(scope string) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := s.core.Authorize(caller(c), scope); err != nil {
			s.writeError(c, err)
		}
	}
}

// caller is who the request acts for, as authenticate found.
func caller(c *gin.Context) core.Caller {
	v, _ := c.Get(keyCaller)
	cl, _ := v.(core.Caller)
	cl.Door = door
	return cl
}
