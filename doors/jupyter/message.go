package jupyterdoor

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"
)

// protocolVersion is the Jupyter messaging protocol the door speaks.
const protocolVersion = "5.3"

// header is a message header (every field a string, as clients check).
type header struct {
	MsgID    string `json:"msg_id"`
	MsgType  string `json:"msg_type"`
	Username string `json:"username"`
	Session  string `json:"session"`
	Date     string `json:"date"`
	Version  string `json:"version"`
}

// inbound is a message from a client. Parent replies echo RawHeader as
// their parent_header, exactly as the client sent it.
type inbound struct {
	Channel   string
	Header    header
	RawHeader json.RawMessage
	Content   json.RawMessage
	// Seq numbers a connection's shell requests in arrival order.
	Seq int64
}

// outbound is a message to clients.
type outbound struct {
	Channel  string          `json:"channel"`
	Header   header          `json:"header"`
	Parent   json.RawMessage `json:"parent_header"`
	Metadata any             `json:"metadata"`
	Content  any             `json:"content"`
	Buffers  []any           `json:"buffers"`
}

var emptyObject = json.RawMessage("{}")

// newID is a fresh message or kernel session id.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// message builds a kernel message of type typ on channel, in kernel
// session ks, answering parent (nil: none).
func message(channel, typ, ks string, parent json.RawMessage, content any) outbound {
	if parent == nil {
		parent = emptyObject
	}
	return outbound{
		Channel: channel,
		Header: header{MsgID: newID(), MsgType: typ, Username: "paddock", Session: ks,
			Date: jupyterTime(time.Now()), Version: protocolVersion},
		Parent:   parent,
		Metadata: map[string]any{},
		Content:  content,
		Buffers:  []any{},
	}
}

var errFrame = errors.New("malformed kernel message")

// decodeJSON reads a legacy text frame.
func decodeJSON(b []byte) (inbound, error) {
	var raw struct {
		Channel string          `json:"channel"`
		Header  json.RawMessage `json:"header"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return inbound{}, errFrame
	}
	return finish(raw.Channel, raw.Header, raw.Content)
}

func finish(channel string, rawHeader, content json.RawMessage) (inbound, error) {
	in := inbound{Channel: channel, RawHeader: rawHeader, Content: content}
	if err := json.Unmarshal(rawHeader, &in.Header); err != nil || in.Header.MsgType == "" {
		return inbound{}, errFrame
	}
	if len(in.Content) == 0 || string(in.Content) == "null" {
		in.Content = emptyObject
	}
	return in, nil
}

// encodeJSON writes a legacy text frame.
func encodeJSON(m outbound) ([]byte, error) { return json.Marshal(m) }

// The v1.kernel.websocket.jupyter.org framing: a little-endian uint64
// count n, n uint64 offsets, then channel | header | parent_header |
// metadata | content | buffers…; part i spans offsets i to i+1, the last
// offset being the end of the message.
const subprotocolV1 = "v1.kernel.websocket.jupyter.org"

// decodeV1 reads a binary frame of the v1 framing.
func decodeV1(b []byte) (inbound, error) {
	if len(b) < 8 {
		return inbound{}, errFrame
	}
	n := binary.LittleEndian.Uint64(b)
	if n < 5 || n > uint64(len(b)/8-1) {
		return inbound{}, errFrame
	}
	offs := make([]int, 0, n+1)
	prev := 8 * (int(n) + 1)
	for i := range int(n) {
		o := binary.LittleEndian.Uint64(b[8*(i+1):])
		if o < uint64(prev) || o > uint64(len(b)) {
			return inbound{}, errFrame
		}
		prev = int(o)
		offs = append(offs, prev)
	}
	if offs[len(offs)-1] != len(b) {
		offs = append(offs, len(b))
	}
	if len(offs) < 6 {
		return inbound{}, errFrame
	}
	part := func(i int) []byte { return b[offs[i]:offs[i+1]] }
	return finish(string(part(0)), part(1), part(4))
}

// encodeV1 writes a binary frame of the v1 framing.
func encodeV1(m outbound) ([]byte, error) {
	parts := [][]byte{[]byte(m.Channel)}
	for _, v := range []any{m.Header, m.Parent, m.Metadata, m.Content} {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		parts = append(parts, b)
	}
	n := len(parts) + 1
	size := 8 * (n + 1)
	for _, p := range parts {
		size += len(p)
	}
	out := make([]byte, 8*(n+1), size)
	binary.LittleEndian.PutUint64(out, uint64(n))
	off := 8 * (n + 1)
	for i, p := range parts {
		binary.LittleEndian.PutUint64(out[8*(i+1):], uint64(off))
		off += len(p)
	}
	binary.LittleEndian.PutUint64(out[8*n:], uint64(off))
	for _, p := range parts {
		out = append(out, p...)
	}
	return out, nil
}
