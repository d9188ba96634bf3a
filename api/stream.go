package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/runner"
)

// streamWriteTimeout bounds one write to a streaming client; a client that
// stops reading for longer ends the stream and interrupts the cell.
const streamWriteTimeout = 30 * time.Second

// Streamed events. Each is one NDJSON line, or one SSE event named by its
// type.
type (
	textEvent struct {
		Type string `json:"type"` // "stdout" | "stderr"
		Text string `json:"text"`
	}
	resultEvent struct {
		Type           string         `json:"type"` // "result"
		Data           map[string]any `json:"data"`
		Metadata       map[string]any `json:"metadata"`
		Main           bool           `json:"main"`
		ExecutionCount int            `json:"execution_count,omitempty"`
	}
	errorEvent struct {
		Type string `json:"type"` // "error"
		execError
	}
	keepaliveEvent struct {
		Type string `json:"type"` // "keepalive"
	}
	endEvent struct {
		Type string `json:"type"` // "end"
		executeResponse
	}
)

// streamEvent translates a kernel event; ok is false for types the API
// does not stream.
func streamEvent(e runner.Event) (typ string, v any, ok bool) {
	switch e.Type {
	case runner.EventStream:
		typ = "stdout"
		if e.Stream == runner.Stderr {
			typ = "stderr"
		}
		return typ, textEvent{Type: typ, Text: e.Text}, true
	case runner.EventDisplayData, runner.EventExecuteResult:
		main := e.Type == runner.EventExecuteResult
		ev := resultEvent{Type: "result", Data: orEmpty(e.Data), Metadata: orEmpty(e.Metadata), Main: main}
		if main {
			ev.ExecutionCount = e.ExecutionCount
		}
		return "result", ev, true
	case runner.EventError:
		if e.Error == nil {
			return "", nil, false
		}
		return "error", errorEvent{Type: "error", execError: *newExecError(e.Error)}, true
	}
	return "", nil, false
}

// executeStream runs the cell and streams its events as they come. The
// 200 is sent with the first event or keepalive; an error before that is
// answered as usual, one after it becomes the end event's status, reason
// and message.
func (s *server) executeStream(c *gin.Context, id string, in core.ExecuteInput, format string, begin time.Time) {
	ctx, cancel := context.WithCancel(c.Request.Context())
	defer cancel()
	w, stopKeepalive := s.openStream(c, format, cancel)
	var out cellOutput
	res, err := s.core.Execute(ctx, caller(c), id, in, func(e runner.Event) {
		out.add(e)
		if typ, v, ok := streamEvent(e); ok {
			w.send(typ, v)
		}
	})
	stopKeepalive()

	if err != nil && !w.hasStarted() {
		s.writeError(c, err)
		return
	}
	if w.isBroken() {
		s.log.Info("streaming client went away", keySessionID, id)
		return
	}
	end := endEvent{Type: "end", executeResponse: out.response(res, time.Since(begin))}
	if err != nil {
		_, body := s.describeError(c, err)
		end.Status, end.Reason, end.Message = runner.StatusAborted, body.Code, body.Message
	} else {
		c.Set(keyTemplate, res.Template)
	}
	w.send("end", end)
	w.finish()
}

// openStream is a streamer of c's response in format that calls broken
// once a write fails, and sends keepalives every --keepalive of silence
// until stop is called.
func (s *server) openStream(c *gin.Context, format string, broken func()) (w *streamer, stop func()) {
	w = &streamer{c: c, rc: http.NewResponseController(c.Writer), sse: format == formatSSE,
		contentType: format, broken: broken, last: time.Now()}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { w.keepalive(done, s.cfg.Keepalive) })
	return w, func() { close(done); wg.Wait() }
}

// streamer writes events to the response, one at a time, flushing each.
type streamer struct {
	c           *gin.Context
	rc          *http.ResponseController
	sse         bool
	contentType string
	broken      func() // called once a write fails

	mu      sync.Mutex
	started bool
	failed  bool
	last    time.Time // of the last write, or of the start
}

// send writes one event; after a failed write it does nothing.
func (w *streamer) send(typ string, v any) {
	var buf bytes.Buffer
	if w.sse {
		buf.WriteString("event: " + typ + "\ndata: ")
	}
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("api: encoding stream event: " + err.Error())
	}
	if w.sse {
		buf.WriteString("\n") // the encoder ended the data line
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failed {
		return
	}
	if !w.started {
		w.started = true
		h := w.c.Writer.Header()
		h.Set("Content-Type", w.contentType+"; charset=utf-8")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no") // proxies must not hold events back
		w.c.Writer.WriteHeader(http.StatusOK)
	}
	_ = w.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout)) // unsupported by some writers
	_, err := w.c.Writer.Write(buf.Bytes())
	if err == nil {
		err = w.rc.Flush()
	}
	w.last = time.Now()
	if err != nil {
		w.failed = true
		w.broken()
	}
}

// keepalive sends a keepalive event whenever nothing was written for
// every, until stop is closed.
func (w *streamer) keepalive(stop <-chan struct{}, every time.Duration) {
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		w.mu.Lock()
		idle := time.Since(w.last)
		w.mu.Unlock()
		if idle >= every {
			w.send("keepalive", keepaliveEvent{Type: "keepalive"})
			idle = 0
		}
		t.Reset(every - idle)
	}
}

func (w *streamer) hasStarted() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.started
}

func (w *streamer) isBroken() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failed
}

// finish lifts the write deadline once the last event is out.
func (w *streamer) finish() {
	_ = w.rc.SetWriteDeadline(time.Time{})
}
