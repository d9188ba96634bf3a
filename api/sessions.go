package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
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
	Start core.StartKind `json:"start"`
	// Runtime is what isolates the session's sandbox: runsc or runc.
	Runtime string `json:"runtime,omitempty"`
	// Restarts counts the kernels that died under the session and were
	// replaced by fresh ones; LostReason says why a lost session is lost.
	Restarts   int    `json:"restarts,omitempty"`
	LostReason string `json:"lost_reason,omitempty"`
	// ImageBytes is the disk a hibernated session's saved state takes.
	ImageBytes int64 `json:"image_bytes,omitempty"`
	// Network is the egress policy of a networked session's sandboxes.
	Network *core.NetworkPolicy `json:"network,omitempty"`
	// Resumed and ResumeMS are only in the answer to a resume: whether
	// the session was hibernated and woken, and how long that took.
	Resumed  bool    `json:"resumed,omitempty"`
	ResumeMS float64 `json:"resume_ms,omitempty"`
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
	g.POST("/:id/pause", s.pauseSession)
	g.POST("/:id/resume", s.resumeSession)
	g.POST("/:id/fork", s.forkSession)
	g.POST("/:id/checkpoints", s.saveCheckpoint)
	g.GET("/:id/checkpoints", s.listCheckpoints)
	g.POST("/:id/rewind", s.rewindSession)
	g.PUT("/:id/files", s.putFile)
	g.GET("/:id/files", s.getFiles)
}

// needKernels answers 501 on the session routes when sessions are off.
func (s *server) needKernels(c *gin.Context) {
	if !s.core.SessionsEnabled() {
		s.writeError(c, core.ErrSessionsDisabled)
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
	if t, err := s.core.TemplateOf(req.Language, req.Template); err == nil {
		c.Set(keyTemplate, t.Name)
	}
	sess, err := s.core.CreateSession(c.Request.Context(), caller(c), core.SessionInput{
		Language: req.Language,
		Template: req.Template,
		TTL:      core.Scaled(req.TTLS, time.Second),
		Env:      req.Env,
		Limits:   toLimits(req.Limits),
		Network:  toNetworkAsk(req.Network),
	})
	if err != nil {
		s.writeError(c, err)
		return
	}
	c.Set(keySessionID, sess.ID)
	c.Set(keySandboxID, sess.SandboxID)
	c.Header("Location", "/v1/sessions/"+sess.ID)
	resp := sessionResponseOf(sess)
	resp.Timing = &sessionTiming{
		AcquireMS: millis(sess.Opening.Acquire),
		StartMS:   millis(sess.Opening.Start),
		KernelMS:  millis(sess.Opening.Kernel),
		TotalMS:   millis(time.Since(begin)),
	}
	writeJSON(c, http.StatusCreated, resp)
}

// listSessions serves GET /v1/sessions: the caller's sessions, oldest
// first.
func (s *server) listSessions(c *gin.Context) {
	sessions := s.core.Sessions(caller(c))
	body := sessionsBody{Sessions: make([]sessionResponse, 0, len(sessions))}
	for _, sess := range sessions {
		body.Sessions = append(body.Sessions, sessionResponseOf(sess))
	}
	writeJSON(c, http.StatusOK, body)
}

// getSession serves GET /v1/sessions/{id}.
func (s *server) getSession(c *gin.Context) {
	sess, err := s.core.Session(caller(c), sessionID(c))
	if err != nil {
		s.writeError(c, err)
		return
	}
	writeJSON(c, http.StatusOK, sessionResponseOf(sess))
}

// deleteSession serves DELETE /v1/sessions/{id}.
func (s *server) deleteSession(c *gin.Context) {
	if err := s.core.CloseSession(c.Request.Context(), caller(c), sessionID(c)); err != nil {
		s.writeError(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// interruptSession serves POST /v1/sessions/{id}/interrupt.
func (s *server) interruptSession(c *gin.Context) {
	if err := s.core.Interrupt(c.Request.Context(), caller(c), sessionID(c)); err != nil {
		s.writeError(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// restartSession serves POST /v1/sessions/{id}/restart: a fresh
// interpreter under the same id.
func (s *server) restartSession(c *gin.Context) {
	sess, err := s.core.Restart(c.Request.Context(), caller(c), sessionID(c))
	if err != nil {
		s.writeError(c, err)
		return
	}
	writeJSON(c, http.StatusOK, sessionResponseOf(sess))
}

// pauseSession serves POST /v1/sessions/{id}/pause: the session is
// hibernated now.
func (s *server) pauseSession(c *gin.Context) {
	sess, err := s.core.PauseSession(c.Request.Context(), caller(c), sessionID(c))
	if err != nil {
		s.writeError(c, err)
		return
	}
	writeJSON(c, http.StatusOK, sessionResponseOf(sess))
}

// resumeSession serves POST /v1/sessions/{id}/resume: a hibernated
// session is woken now.
func (s *server) resumeSession(c *gin.Context) {
	sess, w, err := s.core.ResumeSession(c.Request.Context(), caller(c), sessionID(c))
	if err != nil {
		s.writeError(c, err)
		return
	}
	resp := sessionResponseOf(sess)
	resp.Resumed, resp.ResumeMS = w.Resumed, millis(w.Took)
	writeJSON(c, http.StatusOK, resp)
}

// forkSession serves POST /v1/sessions/{id}/fork {"count": N}: N new
// sessions from the session's exact state.
func (s *server) forkSession(c *gin.Context) {
	body, err := s.readBody(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	var req struct {
		Count *int `json:"count"`
	}
	if len(body) > 0 {
		if err := decodeJSON(body, &req); err != nil {
			s.writeError(c, err)
			return
		}
	}
	n := 1
	if req.Count != nil {
		n = *req.Count
	}
	children, err := s.core.ForkSession(c.Request.Context(), caller(c), sessionID(c), n)
	if err != nil {
		s.writeError(c, err)
		return
	}
	out := sessionsBody{Sessions: make([]sessionResponse, 0, len(children))}
	for _, child := range children {
		out.Sessions = append(out.Sessions, sessionResponseOf(child))
	}
	writeJSON(c, http.StatusCreated, out)
}

type checkpointResponse struct {
	Name           string    `json:"name"`
	ExecutionCount int       `json:"execution_count"`
	Bytes          int64     `json:"bytes"`
	CreatedAt      time.Time `json:"created_at"`
}

func checkpointOf(cp core.Checkpoint) checkpointResponse {
	return checkpointResponse{Name: cp.Name, ExecutionCount: cp.ExecutionCount, Bytes: cp.Bytes, CreatedAt: cp.CreatedAt.UTC()}
}

// readBodyInto reads the request body into v, a pointer to a struct of
// known fields, and answers the error itself.
func (s *server) readBodyInto(c *gin.Context, v any) bool {
	body, err := s.readBody(c)
	if err == nil {
		err = decodeJSON(body, v)
	}
	if err != nil {
		s.writeError(c, err)
		return false
	}
	return true
}

// saveCheckpoint serves POST /v1/sessions/{id}/checkpoints {"name"}.
func (s *server) saveCheckpoint(c *gin.Context) {
	var req struct {
		Name string `json:"name"`
	}
	if !s.readBodyInto(c, &req) {
		return
	}
	cp, err := s.core.SaveCheckpoint(c.Request.Context(), caller(c), sessionID(c), req.Name)
	if err != nil {
		s.writeError(c, err)
		return
	}
	writeJSON(c, http.StatusCreated, checkpointOf(cp))
}

// listCheckpoints serves GET /v1/sessions/{id}/checkpoints.
func (s *server) listCheckpoints(c *gin.Context) {
	cps, err := s.core.Checkpoints(caller(c), sessionID(c))
	if err != nil {
		s.writeError(c, err)
		return
	}
	out := struct {
		Checkpoints []checkpointResponse `json:"checkpoints"`
	}{Checkpoints: make([]checkpointResponse, 0, len(cps))}
	for _, cp := range cps {
		out.Checkpoints = append(out.Checkpoints, checkpointOf(cp))
	}
	writeJSON(c, http.StatusOK, out)
}

// rewindSession serves POST /v1/sessions/{id}/rewind {"checkpoint"}.
func (s *server) rewindSession(c *gin.Context) {
	var req struct {
		Checkpoint string `json:"checkpoint"`
	}
	if !s.readBodyInto(c, &req) {
		return
	}
	sess, err := s.core.Rewind(c.Request.Context(), caller(c), sessionID(c), req.Checkpoint)
	if err != nil {
		s.writeError(c, err)
		return
	}
	writeJSON(c, http.StatusOK, sessionResponseOf(sess))
}

func sessionResponseOf(sess core.Session) sessionResponse {
	return sessionResponse{
		ID:             sess.ID,
		Language:       sess.Language,
		Template:       sess.Template,
		State:          sess.State,
		ExecutionCount: sess.ExecutionCount,
		CreatedAt:      sess.CreatedAt.UTC(),
		LastUsedAt:     sess.LastUsed.UTC(),
		ExpiresAt:      sess.ExpiresAt.UTC(),
		TTLS:           int64(sess.TTL / time.Second),
		Warm:           sess.Start == core.StartPool || sess.Start == core.StartKernel,
		Start:          sess.Start,
		Runtime:        sess.Runtime,
		Restarts:       sess.Restarts,
		LostReason:     sess.LostReason,
		ImageBytes:     sess.ImageBytes,
		Network:        sess.Network,
	}
}

// toNetworkAsk is a session's network request in the core's terms.
func toNetworkAsk(req *networkRequest) *core.NetworkAsk {
	if req == nil {
		return nil
	}
	return &core.NetworkAsk{Allow: append([]string{}, req.Allow...)}
}
