package mcpdoor

import (
	"sync"

	"github.com/gin-gonic/gin"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddock-dev/paddock/core"
)

// sessionIDHeader names the MCP session a request belongs to; the SDK
// sets it on the answer to the request that opened one.
const sessionIDHeader = "Mcp-Session-Id"

// holds makes each MCP session a connection the core counts for its
// tenant: a POST without a session id (an initialize: the SDK opens a
// session for it) takes a hold first, refused with the core's 429, and
// the hold is released when that session ends, however it ends (DELETE,
// the idle timeout, a failed initialize the SDK closes at once).
type holds struct {
	core   Core
	server *mcp.Server
	fail   func(*gin.Context, error)
}

// hold runs after authenticate.
func (h *holds) hold(c *gin.Context) {
	if c.GetHeader(sessionIDHeader) != "" {
		return // a request of an open session: its hold was taken when it opened
	}
	caller, _ := c.Request.Context().Value(callerCtxKey{}).(core.Caller)
	release, err := h.core.HoldConnection(caller)
	if err != nil {
		h.fail(c, err)
		return
	}
	w := &holdWriter{ResponseWriter: c.Writer}
	w.settle = func() { h.settle(w.Header().Get(sessionIDHeader), release) }
	c.Writer = w
	c.Next()
	w.once.Do(w.settle)
}

// settle keeps the hold for as long as the session the answer names
// stays open, or releases it now when there is none: the request opened
// no session (a stateless probe such as server/discover, or a refusal).
// It runs before the answer's first byte leaves, so a client that opens
// a session right after finds the slot free.
func (h *holds) settle(id string, release func()) {
	ss := h.session(id)
	if ss == nil {
		release()
		return
	}
	go func() {
		_ = ss.Wait() // returns at once for a session that already ended
		release()
	}()
}

// holdWriter settles the hold when the answer starts.
type holdWriter struct {
	gin.ResponseWriter
	settle func()
	once   sync.Once
}

func (w *holdWriter) WriteHeader(code int) {
	w.once.Do(w.settle)
	w.ResponseWriter.WriteHeader(code)
}

func (w *holdWriter) WriteHeaderNow() {
	w.once.Do(w.settle)
	w.ResponseWriter.WriteHeaderNow()
}

func (w *holdWriter) Write(b []byte) (int, error) {
	w.once.Do(w.settle)
	return w.ResponseWriter.Write(b)
}

func (w *holdWriter) WriteString(s string) (int, error) {
	w.once.Do(w.settle)
	return w.ResponseWriter.WriteString(s)
}

// session is the open MCP session with id, nil if none.
func (h *holds) session(id string) *mcp.ServerSession {
	if id == "" {
		return nil
	}
	for ss := range h.server.Sessions() {
		if ss.ID() == id {
			return ss
		}
	}
	return nil
}
