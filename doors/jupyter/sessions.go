package jupyterdoor

import (
	"net/http"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
)

// A Jupyter session ties a document (path, name, type) to a kernel; it
// is what JupyterLab's SessionManager opens. The door keeps them, per
// tenant, only while their kernel lives: the kernel is the Paddock
// session and carries all the limits.
type jsession struct {
	ID     string
	Tenant string
	Path   string
	Name   string
	Type   string
	Kernel string
}

type sessionTable struct {
	mu sync.Mutex
	m  map[string]*jsession
}

func newSessionTable() *sessionTable { return &sessionTable{m: map[string]*jsession{}} }

// sessionModel is a session as Jupyter's REST API shows it.
type sessionModel struct {
	ID       string            `json:"id"`
	Path     string            `json:"path"`
	Name     string            `json:"name"`
	Type     string            `json:"type"`
	Kernel   *kernelModel      `json:"kernel"`
	Notebook map[string]string `json:"notebook"`
}

// sessionRequest is POST /api/sessions and PATCH /api/sessions/{id}.
type sessionRequest struct {
	Path   *string `json:"path"`
	Name   *string `json:"name"`
	Type   *string `json:"type"`
	Kernel *struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"kernel"`
}

// live returns the caller's sessions whose kernel is still there, with
// its model, forgetting the others.
func (d *door) liveSessions(c *gin.Context) []sessionModel {
	cl := callerOf(c)
	t := d.sessions
	t.mu.Lock()
	var mine []jsession
	for _, s := range t.m {
		if s.Tenant == cl.Tenant {
			mine = append(mine, *s)
		}
	}
	t.mu.Unlock()
	out := []sessionModel{}
	for _, s := range mine {
		m, ok := d.sessionModelOf(cl, s)
		if ok {
			out = append(out, m)
		}
	}
	return out
}

// sessionModelOf is s with its kernel's model; false (and s forgotten)
// when its kernel is gone.
func (d *door) sessionModelOf(cl core.Caller, s jsession) (sessionModel, bool) {
	k, err := d.svc.Session(cl, s.Kernel)
	if err != nil {
		d.sessions.mu.Lock()
		delete(d.sessions.m, s.ID)
		d.sessions.mu.Unlock()
		return sessionModel{}, false
	}
	km := d.model(k)
	return sessionModel{ID: s.ID, Path: s.Path, Name: s.Name, Type: s.Type, Kernel: &km,
		Notebook: map[string]string{"path": s.Path, "name": s.Name}}, true
}

func (d *door) listSessions(c *gin.Context) {
	c.JSON(http.StatusOK, d.liveSessions(c))
}

func (d *door) findSession(c *gin.Context) (sessionModel, bool) {
	cl := callerOf(c)
	d.sessions.mu.Lock()
	s, ok := d.sessions.m[c.Param("id")]
	var cp jsession
	if ok && s.Tenant == cl.Tenant {
		cp = *s
	} else {
		ok = false
	}
	d.sessions.mu.Unlock()
	if !ok {
		fail(c, errNoSession)
		return sessionModel{}, false
	}
	m, ok := d.sessionModelOf(cl, cp)
	if !ok {
		fail(c, errNoSession)
	}
	return m, ok
}

func (d *door) getSession(c *gin.Context) {
	if m, ok := d.findSession(c); ok {
		c.JSON(http.StatusOK, m)
	}
}

// createSession opens a session: a new kernel of the asked name, or an
// existing kernel of the caller's by id. A path that already has a
// session gets that one back, as Jupyter Server does.
func (d *door) createSession(c *gin.Context) {
	var req sessionRequest
	if err := decodeBody(c, d.opts.MaxMessageBytes, &req); err != nil {
		fail(c, err)
		return
	}
	if req.Path == nil {
		fail(c, errBadBody)
		return
	}
	for _, m := range d.liveSessions(c) {
		if m.Path == *req.Path {
			c.JSON(http.StatusCreated, m)
			return
		}
	}
	s := jsession{ID: kernelID(d.opts.IDPrefix + newID()[len(d.opts.IDPrefix):]), Tenant: callerOf(c).Tenant, Path: *req.Path, Type: "notebook"}
	if req.Name != nil {
		s.Name = *req.Name
	}
	if req.Type != nil {
		s.Type = *req.Type
	}
	kernel, err := d.kernelFor(c, req)
	if err != nil {
		fail(c, err)
		return
	}
	s.Kernel = kernel
	if err := d.sessions.add(s); err != nil {
		fail(c, err)
		return
	}
	m, ok := d.sessionModelOf(callerOf(c), s)
	if !ok {
		fail(c, errNoSession)
		return
	}
	c.JSON(http.StatusCreated, m)
}

// kernelFor is the kernel a session request names: the caller's existing
// kernel by id, or a new one by name.
func (d *door) kernelFor(c *gin.Context, req sessionRequest) (string, error) {
	if req.Kernel != nil && req.Kernel.ID != "" {
		k, err := d.svc.Session(callerOf(c), sessionID(req.Kernel.ID))
		return k.ID, err
	}
	name := ""
	if req.Kernel != nil {
		name = req.Kernel.Name
	}
	k, err := d.startSession(c, name)
	return k.ID, err
}

func (t *sessionTable) add(s jsession) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, o := range t.m {
		if o.Tenant == s.Tenant {
			n++
		}
	}
	if n >= maxJupyterSessions {
		return errTooManyJupSes
	}
	t.m[s.ID] = &s
	return nil
}

// patchSession renames a session or changes its kernel (a new kernel by
// name, or another of the caller's by id); a replaced kernel is shut down
// unless another session still uses it.
func (d *door) patchSession(c *gin.Context) {
	cur, ok := d.findSession(c)
	if !ok {
		return
	}
	var req sessionRequest
	if err := decodeBody(c, d.opts.MaxMessageBytes, &req); err != nil {
		fail(c, err)
		return
	}
	kernel := sessionID(cur.Kernel.ID)
	if req.Kernel != nil && (req.Kernel.ID != "" && sessionID(req.Kernel.ID) != kernel || req.Kernel.ID == "" && req.Kernel.Name != "") {
		var err error
		if kernel, err = d.kernelFor(c, req); err != nil {
			fail(c, err)
			return
		}
	}
	d.sessions.mu.Lock()
	s, ok := d.sessions.m[cur.ID]
	var cp jsession
	if ok {
		if req.Path != nil {
			s.Path = *req.Path
		}
		if req.Name != nil {
			s.Name = *req.Name
		}
		if req.Type != nil {
			s.Type = *req.Type
		}
		s.Kernel = kernel
		cp = *s
	}
	d.sessions.mu.Unlock()
	if !ok {
		fail(c, errNoSession)
		return
	}
	if old := sessionID(cur.Kernel.ID); kernel != old && !d.sessions.uses(old) {
		_ = d.svc.CloseSession(c.Request.Context(), callerOf(c), old)
		d.hubs.ended(callerOf(c).Tenant, old)
	}
	m, ok := d.sessionModelOf(callerOf(c), cp)
	if !ok {
		fail(c, errNoSession)
		return
	}
	c.JSON(http.StatusOK, m)
}

// deleteSession ends a session and shuts its kernel down, as Jupyter
// Server does.
func (d *door) deleteSession(c *gin.Context) {
	cur, ok := d.findSession(c)
	if !ok {
		return
	}
	d.sessions.mu.Lock()
	delete(d.sessions.m, cur.ID)
	d.sessions.mu.Unlock()
	kernel := sessionID(cur.Kernel.ID)
	if err := d.svc.CloseSession(c.Request.Context(), callerOf(c), kernel); err != nil {
		fail(c, err)
		return
	}
	d.hubs.ended(callerOf(c).Tenant, kernel)
	d.sessions.dropKernel(kernel)
	c.Status(http.StatusNoContent)
}

// uses reports whether a session still uses kernel id.
func (t *sessionTable) uses(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, s := range t.m {
		if s.Kernel == id {
			return true
		}
	}
	return false
}

// dropKernel forgets the sessions of kernel id.
func (t *sessionTable) dropKernel(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for sid, s := range t.m {
		if s.Kernel == id {
			delete(t.m, sid)
		}
	}
}
