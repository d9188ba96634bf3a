package e2bdoor

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
)

// A hand-written Connect protocol codec, JSON only: envd's few methods
// need unary calls (application/json) and server streams
// (application/connect+json: 1 flag byte, a 4-byte big-endian length, a
// JSON message; flag 2 marks the end-of-stream message). Generated
// connectrpc.com/connect code would need envd's .proto and protoc in the
// build for a handful of plain JSON messages.

// Envelope flags.
const (
	flagMessage   = 0
	flagEndStream = 2
)

// connectCode is the Connect error code of each kind; the SDK maps
// not_found to NotFoundError (FileNotFoundError for files), unavailable
// to its sandbox-timeout error, deadline_exceeded to TimeoutError.
func connectCode(k core.Kind) string {
	switch k {
	case core.KindInvalid:
		return "invalid_argument"
	case core.KindUnauthenticated:
		return "unauthenticated"
	case core.KindForbidden:
		return "permission_denied"
	case core.KindNotFound:
		return "not_found"
	case core.KindConflict:
		return "aborted"
	case core.KindGone, core.KindUnavailable:
		return "unavailable"
	case core.KindTooLarge:
		return "out_of_range"
	case core.KindTooMany:
		return "resource_exhausted"
	case core.KindTimeout:
		return "deadline_exceeded"
	case core.KindNotImplemented:
		return "unimplemented"
	case core.KindCanceled:
		return "canceled"
	}
	return "internal"
}

// connectStatus is the HTTP status of a unary error, per the Connect
// protocol's table.
var connectStatus = map[string]int{
	"invalid_argument": 400, "out_of_range": 400, "failed_precondition": 400,
	"unauthenticated": 401, "permission_denied": 403, "not_found": 404,
	"aborted": 409, "already_exists": 409, "resource_exhausted": 429,
	"canceled": 499, "unimplemented": 501, "unavailable": 503,
	"deadline_exceeded": 504, "internal": 500,
}

type connectError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// isStream reports whether the request is a Connect streaming call.
func isStream(c *gin.Context) bool {
	return strings.HasPrefix(c.GetHeader("Content-Type"), "application/connect+")
}

// failConnect answers err as a Connect error: for a unary call an HTTP
// status and a JSON body, for a stream a 200 whose only envelope is the
// end of stream carrying the error.
func failConnect(c *gin.Context, err error) {
	e := classify(err)
	ce := connectError{Code: connectCode(e.Kind), Message: e.Message}
	if isStream(c) {
		s := newStream(c)
		s.end(&ce)
		c.Abort()
		return
	}
	c.AbortWithStatusJSON(connectStatus[ce.Code], ce)
}

// readUnary decodes a unary call's JSON body into v.
func (d *door) readUnary(c *gin.Context, v any) error {
	if ct := c.GetHeader("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return invalid("content type " + strconv.Quote(ct) + " is not served: Paddock speaks Connect with the JSON codec")
	}
	return d.readJSON(c, v)
}

// readStreamRequest decodes the single enveloped message of a server
// stream's request into v.
func (d *door) readStreamRequest(c *gin.Context, v any) error {
	if ct := c.GetHeader("Content-Type"); !strings.HasPrefix(ct, "application/connect+json") {
		return invalid("content type " + strconv.Quote(ct) + " is not served: Paddock speaks Connect with the JSON codec")
	}
	var head [5]byte
	if _, err := io.ReadFull(c.Request.Body, head[:]); err != nil {
		return invalid("reading the request envelope: " + err.Error())
	}
	if head[0] != flagMessage {
		return invalid(fmt.Sprintf("request envelope flag %d: compressed messages are not served", head[0]))
	}
	n := binary.BigEndian.Uint32(head[1:])
	if int64(n) > d.cfg.MaxBodyBytes {
		return &core.Error{Kind: core.KindTooLarge, Code: "too_large", Message: fmt.Sprintf("request message over %d bytes", d.cfg.MaxBodyBytes)}
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(c.Request.Body, body); err != nil {
		return invalid("reading the request message: " + err.Error())
	}
	if err := json.Unmarshal(body, v); err != nil {
		return invalid("request message is not valid JSON: " + err.Error())
	}
	return nil
}

// stream writes a Connect server stream's envelopes, each flushed; it is
// safe for concurrent use.
type stream struct {
	c     *gin.Context
	mu    sync.Mutex
	begun bool
	ended bool
}

func newStream(c *gin.Context) *stream { return &stream{c: c} }

func (s *stream) writeLocked(flag byte, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{}`)
	}
	if !s.begun {
		s.begun = true
		s.c.Header("Content-Type", "application/connect+json")
		s.c.Status(http.StatusOK)
	}
	var head [5]byte
	head[0] = flag
	binary.BigEndian.PutUint32(head[1:], uint32(len(b)))
	_, _ = s.c.Writer.Write(head[:])
	_, _ = s.c.Writer.Write(b)
	s.c.Writer.Flush()
}

// send writes one message; after end it does nothing.
func (s *stream) send(v any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended {
		s.writeLocked(flagMessage, v)
	}
}

// end writes the end-of-stream message, with err when not nil.
func (s *stream) end(err *connectError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	s.ended = true
	if err != nil {
		s.writeLocked(flagEndStream, map[string]any{"error": err})
		return
	}
	s.writeLocked(flagEndStream, struct{}{})
}

// endWith ends the stream with err classified, or cleanly when nil.
func (s *stream) endWith(err error) {
	if err == nil {
		s.end(nil)
		return
	}
	e := classify(err)
	s.end(&connectError{Code: connectCode(e.Kind), Message: e.Message})
}

// timeoutOfCall is the Connect-Timeout-Ms a client sent; 0 when none.
func timeoutOfCall(c *gin.Context) time.Duration {
	ms, err := strconv.ParseInt(c.GetHeader("Connect-Timeout-Ms"), 10, 64)
	if err != nil || ms <= 0 {
		return 0
	}
	return core.Scaled(ms, time.Millisecond)
}

// unknownMethod answers a method the door does not serve.
func unknownMethod(c *gin.Context, service string) {
	failConnect(c, unsupported(service+"/"+c.Param("method")+" is not served by Paddock's envd"))
}
