package jupyterdoor

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
)

// Bounds of one connection.
const (
	sendQueue  = 4096 // frames waiting for a slow client; past it the client is dropped
	shellQueue = 256  // shell requests waiting their turn on one connection
)

// conn is one client's WebSocket to a kernel.
type conn struct {
	d      *door
	ws     *websocket.Conn
	v1     bool
	caller core.Caller
	id     string
	hub    *hub
	// client is the session id the client's WebSocket URL names ("" if
	// none), by which a reconnecting client is known (replay.go).
	client string

	out   chan []byte
	shell chan inbound
	done  chan struct{}
	once  sync.Once

	shellSeq atomic.Int64 // the Seq of the last shell request received

	// afterIdle, set by a shell request, runs once its idle status is
	// sent (the shell loop's goroutine only).
	afterIdle func()

	// stdin is where an input_reply goes while a cell waits for one.
	stdinMu sync.Mutex
	stdin   chan string
}

// channels serves GET /api/kernels/{id}/channels.
func (d *door) channels(c *gin.Context) {
	cl, id := callerOf(c), sessionID(c.Param("id"))
	s, err := d.svc.Session(cl, id)
	if err != nil {
		fail(c, err)
		return
	}
	// The open socket is one of the tenant's connections until it ends:
	// over the cap the upgrade is refused with 429 and Retry-After.
	release, err := d.svc.HoldConnection(cl)
	if err != nil {
		fail(c, err)
		return
	}
	defer release()
	ws, err := websocket.Accept(c.Writer, c.Request, &websocket.AcceptOptions{Subprotocols: []string{subprotocolV1}})
	if err != nil {
		d.log.Info("kernel websocket refused", "session_id", id, "error", err)
		return
	}
	ws.SetReadLimit(d.opts.MaxMessageBytes)
	k := &conn{d: d, ws: ws, v1: ws.Subprotocol() == subprotocolV1, caller: cl, id: id, client: clientSession(c),
		out: make(chan []byte, sendQueue), shell: make(chan inbound, shellQueue), done: make(chan struct{})}
	k.hub = d.hubs.join(cl.Tenant, id, k)
	defer d.hubs.leave(k.hub, k)
	ctx := context.WithoutCancel(c.Request.Context())
	d.hubs.replayTo(k)
	go k.write(ctx)
	go k.ping(ctx)
	go k.serveShell()
	if s.State == core.SessionLost {
		k.hub.status("dead", nil)
	}
	k.read(ctx)
}

// read dispatches the client's messages until the connection ends. A
// text frame is JSON on either framing, a binary one v1 or JSON with
// buffers by the framing agreed. A frame refused is answered at once: an
// error reply to the request when its header could be read, otherwise a
// close with the reason; never silence that leaves the client waiting.
func (k *conn) read(ctx context.Context) {
	defer k.close("client gone")
	for {
		typ, b, err := k.ws.Read(ctx)
		if err != nil {
			return
		}
		var in inbound
		switch {
		case typ == websocket.MessageText:
			in, err = decodeJSON(b)
		case k.v1:
			in, err = decodeV1(b)
		default:
			in, err = decodeBinaryJSON(b)
		}
		var r *refused
		switch {
		case errors.As(err, &r) && r.req != nil:
			k.d.log.Info("kernel websocket: refused a message", "session_id", k.id, "msg_type", r.req.Header.MsgType, "error", err)
			k.refuse(*r.req, r.why)
		case err != nil:
			k.d.log.Info("kernel websocket: closed on a malformed message", "session_id", k.id, "error", err)
			k.closeWith(websocket.StatusInvalidFramePayloadData, err.Error())
			return
		default:
			k.dispatch(in)
		}
	}
}

// dispatch hands a message to its channel's handler. interrupt_request
// and shutdown_request on shell (where ipykernel takes them too, and
// where a client that names no channel sends them) are answered at once
// on shell, not behind a running cell.
func (k *conn) dispatch(in inbound) {
	switch in.Channel {
	case "shell":
		if t := in.Header.MsgType; t == "interrupt_request" || t == "shutdown_request" {
			go k.control(in)
			return
		}
		in.Seq = k.shellSeq.Add(1)
		select {
		case k.shell <- in:
		default:
			k.reply(in, replyType(in.Header.MsgType), errorContent("QueueFull", "too many requests waiting on this connection"))
		}
	case "control":
		go k.control(in)
	case "stdin":
		if in.Header.MsgType != "input_reply" {
			k.refuse(in, "stdin takes only input_reply from a client")
			return
		}
		k.deliverInput(in)
	default:
		why := "no channel " + strconv.Quote(in.Channel) + ": a message goes on shell, control or stdin"
		in.Channel = "shell" // every client listens there
		k.refuse(in, why)
	}
}

// refuse answers a request the door will not take with an error reply
// on its channel, parented on it, as the reply to it would be.
func (k *conn) refuse(in inbound, why string) {
	k.reply(in, replyType(in.Header.MsgType), errorContent("BadMessage", why))
}

// write sends queued frames in order.
func (k *conn) write(ctx context.Context) {
	typ := websocket.MessageText
	if k.v1 {
		typ = websocket.MessageBinary
	}
	for {
		select {
		case <-k.done:
			return
		case b := <-k.out:
			if err := k.ws.Write(ctx, typ, b); err != nil {
				k.close("write failed")
				return
			}
		}
	}
}

// ping pings the client every PingInterval while the connection is
// open, as Jupyter Server does, so that a cell printing nothing for a
// while does not look like a dead server to a client reading with a
// timeout. A pong that does not come within the interval is let be: the
// read loop ends the connection once it is really gone.
func (k *conn) ping(ctx context.Context) {
	every := k.d.opts.PingInterval
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-k.done:
			return
		case <-t.C:
			pctx, cancel := context.WithTimeout(ctx, every)
			_ = k.ws.Ping(pctx)
			cancel()
		}
	}
}

// send queues m for this client; a client too slow to take its frames
// is dropped rather than holding the kernel's output.
func (k *conn) send(m outbound) {
	enc := encodeJSON
	if k.v1 {
		enc = encodeV1
	}
	b, err := enc(m)
	if err != nil {
		k.d.log.Error("kernel websocket: encoding a message", "session_id", k.id, "error", err)
		return
	}
	select {
	case <-k.done:
	case k.out <- b:
	default:
		k.close("client too slow")
	}
}

// close ends the connection once.
func (k *conn) close(why string) {
	status := websocket.StatusNormalClosure
	if why == "client too slow" {
		status = websocket.StatusPolicyViolation
	}
	k.closeWith(status, why)
}

// closeWith ends the connection once with a close frame of status and
// why (at most 123 bytes, as the frame allows).
func (k *conn) closeWith(status websocket.StatusCode, why string) {
	if len(why) > 123 {
		why = why[:123]
	}
	k.once.Do(func() {
		close(k.done)
		go func() { _ = k.ws.Close(status, why) }()
	})
}

func (k *conn) closed() bool {
	select {
	case <-k.done:
		return true
	default:
		return false
	}
}

// reply sends a reply on in's channel to this client only.
func (k *conn) reply(in inbound, typ string, content any) {
	k.send(message(in.Channel, typ, k.hub.kernelSession(), in.RawHeader, content))
}

// replyType is the reply type of a request type.
func replyType(req string) string {
	base, _ := strings.CutSuffix(req, "_request")
	return base + "_reply"
}

// errorContent is a reply's content for a request that failed.
func errorContent(ename, evalue string) map[string]any {
	return map[string]any{"status": "error", "ename": ename, "evalue": evalue, "traceback": []string{ename + ": " + evalue}}
}

// coreError is an error reply's content for a core error.
func coreError(err error) map[string]any {
	e := core.Classify(err)
	var ce *core.Error
	if errors.As(e, &ce) {
		return errorContent(ce.Code, ce.Message)
	}
	return errorContent("internal", "internal error")
}
