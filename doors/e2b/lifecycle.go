package e2bdoor

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
)

// Pausing and resuming. An E2B sandbox pauses as its main session
// hibernates (the core saves it whole and frees its sandbox); its other
// contexts hibernate with it. Connect wakes the main session; the other
// contexts wake on their next call, as the core wakes any session.

// E2B's sandbox states, as get and list report them.
const (
	stateRunning = "running"
	statePaused  = "paused"
)

// stateOf is the E2B state of a sandbox whose main session is s.
func stateOf(s core.Session) string {
	if s.State == core.SessionHibernated {
		return statePaused
	}
	return stateRunning
}

// memoryRequest is the body of pause ({"memory"}: keepMemory) and
// connect ({"timeout", "memory"}: false for onResume 'reboot').
type memoryRequest struct {
	Timeout *int64 `json:"timeout"`
	Memory  *bool  `json:"memory"`
}

// noMemory refuses memory false: Paddock always saves and wakes a
// sandbox with its memory, and E2B says a server without the
// filesystem-only kind must refuse it rather than keep the memory.
func noMemory(req memoryRequest) error {
	if req.Memory != nil && !*req.Memory {
		return invalid("memory: false (keepMemory false, onResume 'reboot') is not served: Paddock pauses and resumes a sandbox with its memory")
	}
	return nil
}

// pause is POST /sandboxes/{id}/pause: 204 once paused, 409 when it was
// already (the SDK's pause() then returns false), 404 when it is not the
// caller's. A sandbox running a cell or a command cannot be saved: 503,
// which the SDK throws as ServiceBusyError, never a 409 that would read
// as already paused.
func (d *door) pause(c *gin.Context) {
	var req memoryRequest
	if err := d.readJSON(c, &req); err != nil {
		fail(c, err)
		return
	}
	if err := noMemory(req); err != nil {
		fail(c, err)
		return
	}
	ctx := c.Request.Context()
	sb, _, err := d.owned(ctx, callerOf(c), c.Param("id"))
	if err != nil {
		fail(c, err)
		return
	}
	sb.lifecycle.Lock()
	defer sb.lifecycle.Unlock()
	s, err := d.core.Session(sb.owner, sb.id)
	if err != nil {
		fail(c, err)
		return
	}
	if s.State == core.SessionHibernated {
		fail(c, &core.Error{Kind: core.KindConflict, Code: "already_paused", Message: "sandbox \"" + sb.id + "\" is already paused"})
		return
	}
	if _, err := d.core.PauseSession(ctx, sb.owner, sb.id); err != nil {
		if e := classify(err); e.Kind == core.KindConflict {
			err = &core.Error{Kind: core.KindUnavailable, Code: e.Code, Message: e.Message + " (a sandbox is paused between cells and commands; retry when they end)"}
		}
		fail(c, err)
		return
	}
	for _, id := range sb.sessionIDs() {
		if id == sb.id {
			continue
		}
		if _, err := d.core.PauseSession(ctx, sb.owner, id); err != nil {
			d.log.Warn("pausing a context of a paused E2B sandbox failed; it keeps running", keySandboxID, sb.id, "context", id, "err", err)
		}
	}
	c.Status(http.StatusNoContent)
}

// connect is POST /v2/sandboxes/{id}/connect {"timeout"}, Sandbox.connect:
// the owner's sandbox, woken if paused (201) or as it ran (200), its
// timeout renewed when given, with its access tokens.
func (d *door) connect(c *gin.Context) {
	d.wake(c, false)
}

// resume is the older POST /sandboxes/{id}/resume {"timeout"}: 201 once
// woken, 409 when the sandbox was not paused.
func (d *door) resume(c *gin.Context) {
	d.wake(c, true)
}

func (d *door) wake(c *gin.Context, pausedOnly bool) {
	var req memoryRequest
	if err := d.readJSON(c, &req); err != nil {
		fail(c, err)
		return
	}
	var ttl time.Duration
	err := noMemory(req)
	if err == nil && req.Timeout != nil {
		ttl, err = timeoutOf(*req.Timeout)
	}
	if err != nil {
		fail(c, err)
		return
	}
	sb, _, err := d.owned(c.Request.Context(), callerOf(c), c.Param("id"))
	if err != nil {
		fail(c, err)
		return
	}
	status, err := d.wakeMain(c, sb, pausedOnly)
	if err == nil && ttl > 0 {
		err = d.retime(sb, ttl)
	}
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(status, answerOf(sb))
}

// wakeMain resumes sb's main session if it is paused: 201 when it was,
// else 200 (or, for pausedOnly, a 409).
func (d *door) wakeMain(c *gin.Context, sb *sandbox, pausedOnly bool) (int, error) {
	sb.lifecycle.Lock()
	defer sb.lifecycle.Unlock()
	s, err := d.core.Session(sb.owner, sb.id)
	if err != nil {
		return 0, err
	}
	if s.State != core.SessionHibernated {
		if pausedOnly {
			return 0, &core.Error{Kind: core.KindConflict, Code: "not_paused", Message: "sandbox \"" + sb.id + "\" is not paused"}
		}
		return http.StatusOK, nil
	}
	_, w, err := d.core.ResumeSession(c.Request.Context(), sb.owner, sb.id)
	if err != nil {
		return 0, err
	}
	if w.Resumed {
		return http.StatusCreated, nil
	}
	return http.StatusOK, nil
}

// refusePaused refuses an in-sandbox call on a paused sandbox created
// without autoResume, as E2B's proxy does: 409 "The sandbox is paused".
// Health is 502, which the SDK's isRunning() reads as not running.
func refusePaused(sb *sandbox, s core.Session, path string) error {
	if sb.autoResume || s.State != core.SessionHibernated {
		return nil
	}
	msg := "The sandbox is paused: resume it with Sandbox.connect() (it was created without lifecycle.autoResume)"
	if path == "/health" {
		return &core.Error{Kind: core.KindTimeout, Code: "sandbox_paused", Message: msg}
	}
	return &core.Error{Kind: core.KindConflict, Code: "sandbox_paused", Message: msg}
}
