package jupyterdoor

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/paddock-dev/paddock/core"
)

// hub is one kernel's open connections: its iopub goes to every one of
// them. A hub lives while it has connections.
type hub struct {
	tenant, id string

	mu      sync.Mutex
	conns   map[*conn]struct{}
	session string // the kernel's session id (header.session of its messages); new on restart
	dead    bool   // the kernel was reported dead

	inflight map[*execution]struct{} // cells this door is running on the kernel
}

// hubs holds the hubs, by tenant and kernel id.
type hubs struct {
	mu sync.Mutex
	m  map[hubKey]*hub
	// replays are the "starting" messages clients may have missed while
	// reconnecting after a restart (replay.go).
	replays map[replayKey]replay
}

type hubKey struct{ tenant, id string }

func newHubs() *hubs { return &hubs{m: map[hubKey]*hub{}} }

// join adds c to the hub of tenant's kernel id, making it if needed.
func (hs *hubs) join(tenant, id string, c *conn) *hub {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	k := hubKey{tenant, id}
	h := hs.m[k]
	if h == nil {
		h = &hub{tenant: tenant, id: id, conns: map[*conn]struct{}{}, session: newID()}
		hs.m[k] = h
	}
	h.mu.Lock()
	h.conns[c] = struct{}{}
	h.mu.Unlock()
	return h
}

// leave removes c from h, and h once it is empty.
func (hs *hubs) leave(h *hub, c *conn) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	h.mu.Lock()
	delete(h.conns, c)
	empty := len(h.conns) == 0
	h.mu.Unlock()
	if empty && hs.m[hubKey{h.tenant, h.id}] == h {
		delete(hs.m, hubKey{h.tenant, h.id})
	}
}

// get is tenant's hub of kernel id, or nil.
func (hs *hubs) get(tenant, id string) *hub {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.m[hubKey{tenant, id}]
}

// connections counts the connections to tenant's kernel id.
func (hs *hubs) connections(tenant, id string) int {
	h := hs.get(tenant, id)
	if h == nil {
		return 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conns)
}

// ended tells the clients of tenant's kernel id that it is gone (status
// dead) and closes their connections.
func (hs *hubs) ended(tenant, id string) {
	h := hs.get(tenant, id)
	if h == nil {
		return
	}
	h.status("dead", nil)
	for _, c := range h.members() {
		c.close("kernel ended")
	}
}

func (h *hub) members() []*conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*conn, 0, len(h.conns))
	for c := range h.conns {
		out = append(out, c)
	}
	return out
}

// kernelSession is the kernel's current session id.
func (h *hub) kernelSession() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.session
}

// renew gives the kernel a new session id, as a restarted kernel has.
func (h *hub) renew() {
	h.mu.Lock()
	h.session = newID()
	h.dead = false
	h.mu.Unlock()
}

// iopub sends an iopub message of type typ to every client.
func (h *hub) iopub(typ string, parent json.RawMessage, content any) {
	m := message("iopub", typ, h.kernelSession(), parent, content)
	for _, c := range h.members() {
		c.send(m)
	}
}

// status broadcasts the kernel's execution state.
func (h *hub) status(state string, parent json.RawMessage) {
	h.mu.Lock()
	if state == "dead" {
		h.dead = true
	} else if h.dead {
		state = "dead" // a dead kernel never looks idle again
	}
	h.mu.Unlock()
	h.iopub("status", parent, map[string]any{"execution_state": state})
}

// lostIf tells the clients of the caller's kernel id that it is dead
// when err says so: its kernel died (KindGone) or it is gone
// (KindNotFound, after the caller's own lookup succeeded once).
func (d *door) lostIf(cl core.Caller, id string, err error) {
	var e *core.Error
	if !errors.As(core.Classify(err), &e) {
		return
	}
	switch e.Kind {
	case core.KindGone:
		if h := d.hubs.get(cl.Tenant, id); h != nil {
			h.status("dead", nil)
		}
	case core.KindNotFound:
		d.hubs.ended(cl.Tenant, id)
	}
}

// restart restarts the caller's kernel id. Its clients see "restarting"
// first when the restart was asked on the control channel (as Jupyter
// Server's auto-restart tells them to reconnect), and "starting" from the
// fresh interpreter after.
func (d *door) restart(ctx context.Context, cl core.Caller, id string, parent json.RawMessage, announce bool) (core.Session, error) {
	h := d.hubs.get(cl.Tenant, id)
	if h != nil && announce {
		h.status("restarting", parent)
	}
	s, err := d.svc.Restart(ctx, cl, id)
	if err != nil {
		d.lostIf(cl, id, err)
		return s, err
	}
	if h != nil {
		h.renew()
		h.status("starting", parent)
	}
	return s, nil
}
