package jupyterdoor

import (
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
)

// kernelModel is a kernel as Jupyter's REST API shows it.
type kernelModel struct {
	ID             string `json:"id"`
	Name           string `json:"name"`
	LastActivity   string `json:"last_activity"`
	ExecutionState string `json:"execution_state"`
	Connections    int    `json:"connections"`
}

// jupyterTime is how Jupyter writes times (ISO 8601, UTC, microseconds).
func jupyterTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z") }

// executionState maps a session state to Jupyter's: a lost kernel is dead.
func executionState(state string) string {
	switch state {
	case core.SessionBusy:
		return "busy"
	case core.SessionLost:
		return "dead"
	}
	return "idle"
}

func (d *door) model(s core.Session) kernelModel {
	return kernelModel{
		ID:             kernelID(s.ID),
		Name:           kernelName(s.Language),
		LastActivity:   jupyterTime(s.LastUsed),
		ExecutionState: executionState(s.State),
		Connections:    d.hubs.connections(s.Owner, s.ID),
	}
}

func (d *door) listKernels(c *gin.Context) {
	out := []kernelModel{}
	for _, s := range d.svc.Sessions(callerOf(c)) {
		out = append(out, d.model(s))
	}
	c.JSON(http.StatusOK, out)
}

// startRequest is POST /api/kernels. Jupyter Server's gateway client
// also sends "env" (KERNEL_* variables of the host's): the door ignores it,
// since those name the gateway host's paths and user, not the sandbox's.
type startRequest struct {
	Name string `json:"name"`
}

// decodeBody reads an optional JSON body into v.
func decodeBody(c *gin.Context, limit int64, v any) error {
	raw, err := io.ReadAll(io.LimitReader(c.Request.Body, limit+1))
	if err != nil || int64(len(raw)) > limit {
		return errBadBody
	}
	if len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return errBadBody
	}
	return nil
}

func (d *door) startKernel(c *gin.Context) {
	var req startRequest
	if err := decodeBody(c, d.opts.MaxMessageBytes, &req); err != nil {
		fail(c, err)
		return
	}
	s, err := d.startSession(c, req.Name)
	if err != nil {
		fail(c, err)
		return
	}
	c.Header("Location", "/api/kernels/"+kernelID(s.ID))
	c.JSON(http.StatusCreated, d.model(s))
}

// startSession opens a Paddock session for kernel name.
func (d *door) startSession(c *gin.Context, name string) (core.Session, error) {
	lang, err := d.languageOf(name)
	if err != nil {
		return core.Session{}, err
	}
	return d.svc.CreateSession(c.Request.Context(), callerOf(c), core.SessionInput{Language: lang})
}

func (d *door) getKernel(c *gin.Context) {
	s, err := d.svc.Session(callerOf(c), sessionID(c.Param("id")))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, d.model(s))
}

func (d *door) deleteKernel(c *gin.Context) {
	id := sessionID(c.Param("id"))
	if err := d.svc.CloseSession(c.Request.Context(), callerOf(c), id); err != nil {
		fail(c, err)
		return
	}
	d.hubs.ended(callerOf(c).Tenant, id)
	d.sessions.dropKernel(id)
	c.Status(http.StatusNoContent)
}

func (d *door) interruptKernel(c *gin.Context) {
	id := sessionID(c.Param("id"))
	if err := d.interrupt(c.Request.Context(), callerOf(c), id); err != nil {
		fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func (d *door) restartKernel(c *gin.Context) {
	id := sessionID(c.Param("id"))
	s, err := d.restart(c.Request.Context(), callerOf(c), id, nil, false)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, d.model(s))
}
