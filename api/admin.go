package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// adminSessionResponse describes a session to an operator: what its owner
// sees, and who the owner is ("" is the anonymous tenant).
type adminSessionResponse struct {
	Owner string `json:"owner"`
	sessionResponse
}

type adminSessionsBody struct {
	Sessions []adminSessionResponse `json:"sessions"`
}

// adminRoutes registers the operator's read-only views on g (/v1/admin),
// which needs the "admin" scope. They span tenants, so they live apart
// from /v1/sessions, where every route acts for the caller's tenant.
func (s *server) adminRoutes(g *gin.RouterGroup) {
	g.GET("/sessions", s.needKernels, s.listAllSessions)
}

// listAllSessions serves GET /v1/admin/sessions: every tenant's sessions,
// oldest first, each with its owner.
func (s *server) listAllSessions(c *gin.Context) {
	sessions, err := s.core.AllSessions(caller(c))
	if err != nil {
		s.writeError(c, err)
		return
	}
	body := adminSessionsBody{Sessions: make([]adminSessionResponse, 0, len(sessions))}
	for _, sess := range sessions {
		body.Sessions = append(body.Sessions, adminSessionResponse{Owner: sess.Owner, sessionResponse: sessionResponseOf(sess)})
	}
	writeJSON(c, http.StatusOK, body)
}
