package api

import (
	"net"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
)

// guardBrowsers refuses, on every door, what only a web page in a
// browser would send: a cross-site request or a DNS-rebound Host
// (internal/webguard says why each matters). Other clients pass.
func (s *server) guardBrowsers(c *gin.Context) {
	local, _ := c.Request.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if no := s.cfg.Guard.Check(c.Request, local); no != nil {
		s.writeError(c, &core.Error{Kind: core.KindForbidden, Code: no.Code, Message: no.Message})
	}
}
