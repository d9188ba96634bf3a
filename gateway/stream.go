package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
)

// A streamed answer (REST's SSE or NDJSON events) whose node dies
// mid-stream would just stop; the gateway ends it instead with the end
// event /v1 sends for a failure after the stream began, whose error says
// the node was lost, so that a client waiting for the end is told why.

// lostTail is the end event of a stream of contentType broken on node,
// or nil for answers that are no such stream.
func lostTail(contentType, node string) []byte {
	mt, _, _ := mime.ParseMediaType(contentType)
	ev, _ := json.Marshal(map[string]any{"type": "end", "error": map[string]string{
		"code": "node_lost",
		"message": fmt.Sprintf("node %s failed during this execution: its outcome is unknown (it was not retried), "+
			"and its sessions are unavailable until it returns", node),
	}})
	switch mt {
	case "text/event-stream":
		return []byte("event: end\ndata: " + string(ev) + "\n\n")
	case "application/x-ndjson":
		return append(ev, '\n')
	}
	return nil
}

// tailOnError passes a body through; should reading it fail, it ends
// with tail instead of the error.
type tailOnError struct {
	io.ReadCloser
	tail []byte
	off  int
	hit  bool
}

func (b *tailOnError) Read(p []byte) (int, error) {
	if !b.hit {
		n, err := b.ReadCloser.Read(p)
		if err == nil || errors.Is(err, io.EOF) || n > 0 {
			return n, err
		}
		b.hit = true
	}
	if b.off >= len(b.tail) {
		return 0, io.EOF
	}
	n := copy(p, b.tail[b.off:])
	b.off += n
	return n, nil
}
