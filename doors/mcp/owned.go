package mcpdoor

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddock-dev/paddock/core"
)

// closeTimeout bounds closing the sessions of an MCP session that ended.
const closeTimeout = 30 * time.Second

// owned remembers which Paddock sessions each MCP session opened, with the
// caller that opened each, and closes them when the MCP session ends.
type owned struct {
	core Core
	log  *slog.Logger

	mu sync.Mutex
	by map[*mcp.ServerSession]map[string]core.Caller
}

func newOwned(c Core, log *slog.Logger) *owned {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &owned{core: c, log: log, by: map[*mcp.ServerSession]map[string]core.Caller{}}
}

// add records that ss opened the session id for c. The first add for ss
// starts the wait for its end. A session added after ss ended (a create
// that finished late) starts a wait that returns at once, and is closed.
func (o *owned) add(ss *mcp.ServerSession, id string, c core.Caller) {
	if ss == nil {
		return
	}
	o.mu.Lock()
	ids, watched := o.by[ss]
	if !watched {
		ids = map[string]core.Caller{}
		o.by[ss] = ids
	}
	ids[id] = c
	o.mu.Unlock()
	if !watched {
		go o.watch(ss)
	}
}

// remove forgets a session closed by a tool call.
func (o *owned) remove(ss *mcp.ServerSession, id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.by[ss], id)
}

// watch waits for ss to end (the client's DELETE, its idle timeout, a
// broken connection) and closes the sessions it opened.
func (o *owned) watch(ss *mcp.ServerSession) {
	_ = ss.Wait() // returns at once for a session that already ended
	o.mu.Lock()
	ids := o.by[ss]
	delete(o.by, ss)
	o.mu.Unlock()
	o.closeAll(ids)
}

func (o *owned) closeAll(ids map[string]core.Caller) {
	for id, c := range ids {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		err := o.core.CloseSession(ctx, c, id)
		cancel()
		if err != nil && core.Classify(err).Kind != core.KindNotFound {
			o.log.Warn("closing a session of an ended MCP session", "session_id", id, "err", err)
		}
	}
}
