package api

import (
	"context"
	"sync"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/runner"
)

// Events of a streamed run (POST /v1/run with Accept naming NDJSON or
// SSE): its output as it comes, keepalives, then end with the answer a
// plain request would have had.
type (
	runChunkEvent struct {
		Type string `json:"type"` // "stdout" | "stderr"
		Text string `json:"text"`
		// Base64 carries the chunk's exact bytes when they are not valid
		// UTF-8 (Text then has U+FFFD for each invalid byte).
		Base64 string `json:"base64,omitempty"`
	}
	runEndEvent struct {
		Type string `json:"type"` // "end"
		runResponse
		// Error is set when the run failed after the stream began (the
		// rest of the event is then empty): the code and message a plain
		// request would have been answered with.
		Error *errorBody `json:"error,omitempty"`
	}
)

// runStream runs the checked plan and streams its output as the
// agent hands it over. The 200 goes with the first event or keepalive:
// an error before it is answered as usual. A client that goes away, or
// stops reading for streamWriteTimeout, ends the run.
func (s *server) runStream(c *gin.Context, plan core.RunPlan, format string) {
	ctx, cancel := context.WithCancel(c.Request.Context())
	defer cancel()
	w, stopKeepalive := s.openStream(c, format, cancel)
	var chunks chunker
	res, err := s.core.RunPlanned(ctx, plan, func(stream runner.Stream, chunk []byte) {
		if ev, ok := chunks.event(stream, chunk); ok {
			w.send(ev.Type, ev)
		}
	})
	for _, ev := range chunks.flush() {
		w.send(ev.Type, ev)
	}
	stopKeepalive()
	if res.SandboxID != "" {
		c.Set(keySandboxID, res.SandboxID)
	}
	if err != nil && !w.hasStarted() {
		s.writeError(c, err)
		return
	}
	if w.isBroken() {
		s.log.Info("streaming client went away", "path", c.Request.URL.Path)
		return
	}
	end := runEndEvent{Type: "end"}
	if err != nil {
		_, body := s.describeError(c, err)
		end.Error = &body
	} else {
		end.runResponse = newRunResponse(res.Outcome)
		end.Template, end.Runtime, end.Network = res.Template, res.Runtime, newNetworkResponse(res.Network)
	}
	w.send("end", end)
	w.finish()
}

// chunker turns the agent's chunks into events without splitting a UTF-8
// character across two of them: the tail of a chunk that may begin a
// character is held for the next chunk of its stream.
type chunker struct {
	mu   sync.Mutex
	held [2][]byte // stdout, stderr
}

func streamIndex(s runner.Stream) int {
	if s == runner.Stderr {
		return 1
	}
	return 0
}

// event is chunk's event, ok false when all of it is held.
func (k *chunker) event(stream runner.Stream, chunk []byte) (runChunkEvent, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	i := streamIndex(stream)
	b := append(k.held[i], chunk...)
	cut := len(b) - incompleteTail(b)
	k.held[i] = append([]byte(nil), b[cut:]...)
	if cut == 0 {
		return runChunkEvent{}, false
	}
	return chunkEvent(stream, b[:cut]), true
}

// flush is what is still held, once the run is over.
func (k *chunker) flush() []runChunkEvent {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []runChunkEvent
	for i, b := range k.held {
		if len(b) > 0 {
			stream := runner.Stdout
			if i == 1 {
				stream = runner.Stderr
			}
			out = append(out, chunkEvent(stream, b))
			k.held[i] = nil
		}
	}
	return out
}

func chunkEvent(stream runner.Stream, b []byte) runChunkEvent {
	typ := "stdout"
	if stream == runner.Stderr {
		typ = "stderr"
	}
	ev := runChunkEvent{Type: typ}
	ev.Text, ev.Base64 = textAndBytes(b)
	return ev
}

// incompleteTail is how many bytes at b's end begin a UTF-8 character
// that b does not finish (0 to 3).
func incompleteTail(b []byte) int {
	for n := 1; n <= 3 && n <= len(b); n++ {
		c := b[len(b)-n]
		if c < 0x80 {
			return 0 // ASCII: nothing pending
		}
		if utf8.RuneStart(c) {
			if need := leadLen(c); need > n {
				return n
			}
			return 0
		}
	}
	return 0
}

// leadLen is the length of the character a lead byte c begins.
func leadLen(c byte) int {
	switch {
	case c&0xE0 == 0xC0:
		return 2
	case c&0xF0 == 0xE0:
		return 3
	case c&0xF8 == 0xF0:
		return 4
	}
	return 1
}
