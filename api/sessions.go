package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/pool"
)

// sessionResponse describes a session to its owner.
type sessionResponse struct {
	ID             string    `json:"id"`
	Language       string    `json:"language"`
	Template       string    `json:"template"`
	State          string    `json:"state"`
	ExecutionCount int       `json:"execution_count"`
	CreatedAt      time.Time `json:"created_at"`
	LastUsedAt     time.Time `json:"last_used_at"`
	ExpiresAt      time.Time `json:"expires_at"`
	TTLS           int64     `json:"ttl_s"`
	// Warm and Start say how the session's sandbox was made, as in a
	// run's response.
	Warm  bool           `json:"warm"`
	Start pool.StartKind `json:"start"`
	// Runtime is what isolates the session's sandbox: runsc or runc.
	Runtime string `json:"runtime,omitempty"`
	// Timing is only in the answer to the create.
	Timing *sessionTiming `json:"timing,omitempty"`
}

// sessionTiming splits a session's creation into phases.
type sessionTiming struct {
	AcquireMS float64 `json:"acquire_ms"`
	StartMS   float64 `json:"start_ms"`
	KernelMS  float64 `json:"kernel_ms"`
	TotalMS   float64 `json:"total_ms"`
}

type sessionsBody struct {
	Sessions []sessionResponse `json:"sessions"`
}

// sessionRoutes registers the stateful session endpoints on g
// (/v1/sessions).
func (s *server) sessionRoutes(g *gin.RouterGroup) {
	g.POST("", s.createSession)
	g.GET("", s.listSessions)
	g.GET("/:id", s.getSession)
	g.DELETE("/:id", s.deleteSession)
	g.POST("/:id/execute", s.execute)
	g.POST("/:id/interrupt", s.interruptSession)
	g.POST("/:id/restart", s.restartSession)
	g.PUT("/:id/files", s.putFile)
	g.GET("/:id/files", s.getFiles)
}

// needKernels answers 501 on the session routes when sessions are off.
func (s *server) needKernels(c *gin.Context) {
	if s.kernels == nil {
		s.writeError(c, errNoSessions)
	}
}

// sessionID returns the :id parameter and records it for the request log.
func sessionID(c *gin.Context) string {
	id := c.Param("id")
	c.Set(keySessionID, id)
	return id
}

// createSession serves POST /v1/sessions.
func (s *server) createSession(c *gin.Context) {
	begin := time.Now()
	body, err := s.readBody(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	var req createSessionRequest
	if err := decodeJSON(body, &req); err != nil {
		s.writeError(c, err)
		return
	}
	opts, err := s.toCreateOptions(req)
	if err != nil {
		s.writeError(c, err)
		return
	}
	c.Set(keyTemplate, opts.Template)
	done, err := s.startCreate(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	defer done()
	info, err := s.kernels.Create(c.Request.Context(), owner(c), opts)
	if err != nil {
		s.writeError(c, err)
		return
	}
	c.Set(keySessionID, info.ID)
	c.Set(keySandboxID, info.SandboxID)
	c.Header("Location", "/v1/sessions/"+info.ID)
	resp := s.sessionResponse(info)
	resp.Timing = &sessionTiming{
		AcquireMS: millis(info.Opening.Acquire),
		StartMS:   millis(info.Opening.Start),
		KernelMS:  millis(info.Opening.Kernel),
		TotalMS:   millis(time.Since(begin)),
	}
	writeJSON(c, http.StatusCreated, resp)
}

// listSessions serves GET /v1/sessions: the caller's sessions, oldest
// first.
func (s *server) listSessions(c *gin.Context) {
	infos := s.kernels.List(owner(c))
	body := sessionsBody{Sessions: make([]sessionResponse, 0, len(infos))}
	for _, info := range infos {
		body.Sessions = append(body.Sessions, s.sessionResponse(info))
	}
	writeJSON(c, http.StatusOK, body)
}

// getSession serves GET /v1/sessions/{id}.
func (s *server) getSession(c *gin.Context) {
	info, err := s.kernels.Get(owner(c), sessionID(c))
	if err != nil {
		s.writeError(c, err)
		return
	}
	writeJSON(c, http.StatusOK, s.sessionResponse(info))
}

// deleteSession serves DELETE /v1/sessions/{id}.
func (s *server) deleteSession(c *gin.Context) {
	if err := s.kernels.Delete(c.Request.Context(), owner(c), sessionID(c)); err != nil {
		s.writeError(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// interruptSession serves POST /v1/sessions/{id}/interrupt.
func (s *server) interruptSession(c *gin.Context) {
	if err := s.kernels.Interrupt(c.Request.Context(), owner(c), sessionID(c)); err != nil {
		s.writeError(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// restartSession serves POST /v1/sessions/{id}/restart: a fresh
// interpreter under the same id.
func (s *server) restartSession(c *gin.Context) {
	info, err := s.kernels.Restart(c.Request.Context(), owner(c), sessionID(c))
	if err != nil {
		s.writeError(c, err)
		return
	}
	writeJSON(c, http.StatusOK, s.sessionResponse(info))
}

func (s *server) sessionResponse(info kernels.Info) sessionResponse {
	return sessionResponse{
		ID:             info.ID,
		Language:       s.langOf[info.Template],
		Template:       info.Template,
		State:          info.State,
		ExecutionCount: info.ExecutionCount,
		CreatedAt:      info.CreatedAt.UTC(),
		LastUsedAt:     info.LastUsed.UTC(),
		ExpiresAt:      info.ExpiresAt.UTC(),
		TTLS:           int64(info.TTL / time.Second),
		Warm:           info.Start == pool.StartPool,
		Start:          info.Start,
		Runtime:        s.runtimeOf[info.Template],
	}
}
