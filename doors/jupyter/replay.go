package jupyterdoor

import (
	"encoding/json"
	"time"

	"github.com/gin-gonic/gin"
)

// A client told "restarting" reconnects at once (@jupyterlab/services
// drops its socket and opens a new one), so the "starting" that follows
// can reach the old socket after the client has let it go, and is lost:
// the client then waits for it. Jupyter Server keeps what a client's
// session missed while it reconnects and replays it; this door keeps the
// one message that matters: a client connected at a restart, by the
// session id of its WebSocket URL, gets "starting" again when it comes
// back within replayFor.

const (
	replayFor  = time.Minute
	maxReplays = 1024
)

type replayKey struct{ tenant, kernel, client string }

type replay struct {
	parent json.RawMessage
	at     time.Time
}

// noteRestart remembers, for every client of h that names its session,
// that it was told "restarting" under parent.
func (hs *hubs) noteRestart(h *hub, parent json.RawMessage) {
	now := time.Now()
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.replays == nil {
		hs.replays = map[replayKey]replay{}
	}
	for k, r := range hs.replays {
		if now.Sub(r.at) > replayFor {
			delete(hs.replays, k)
		}
	}
	for _, c := range h.members() {
		if c.client == "" || len(hs.replays) >= maxReplays {
			continue
		}
		hs.replays[replayKey{h.tenant, h.id, c.client}] = replay{parent: parent, at: now}
	}
}

// replayTo sends c the "starting" it may have missed, once.
func (hs *hubs) replayTo(c *conn) {
	if c.client == "" {
		return
	}
	k := replayKey{c.hub.tenant, c.hub.id, c.client}
	hs.mu.Lock()
	r, ok := hs.replays[k]
	delete(hs.replays, k)
	hs.mu.Unlock()
	if ok && time.Since(r.at) <= replayFor {
		c.send(message("iopub", "status", c.hub.kernelSession(), r.parent, map[string]any{"execution_state": "starting"}))
	}
}

// clientSession is the session id of c's WebSocket URL, at most 128
// bytes; "" when it names none.
func clientSession(c *gin.Context) string {
	s := c.Query("session_id")
	if len(s) > 128 {
		return ""
	}
	return s
}
