package jupyterdoor

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
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

// outbound is a message to clients. In the JSON framing it carries
// msg_id and msg_type beside the header too, as Jupyter Server's messages
// do: jupyter_client's gateway client reads them there.
type outbound struct {
	Channel  string          `json:"channel"`
	MsgID    string          `json:"msg_id"`
	MsgType  string          `json:"msg_type"`
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
	id := newID()
	return outbound{
		Channel: channel,
		MsgID:   id,
		MsgType: typ,
		Header: header{MsgID: id, MsgType: typ, Username: "paddock", Session: ks,
			Date: jupyterTime(time.Now()), Version: protocolVersion},
		Parent:   parent,
		Metadata: map[string]any{},
		Content:  content,
		Buffers:  []any{},
	}
}

// refused is why the door turned a client's frame down. When the
// frame's header could be read, req is the request, answered with an
// error reply on its channel; otherwise the connection closes with why.
type refused struct {
	why string
	req *inbound
}

func (e *refused) Error() string { return "malformed kernel message: " + e.why }

func refuse(why string) error { return &refused{why: why} }

// decodeJSON reads a frame of the JSON framing: one message object. Only
// header.msg_type is required, as in Jupyter Server's handler; a missing
// or null channel is shell's, as there (see finish).
func decodeJSON(b []byte) (inbound, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil || raw == nil {
		return inbound{}, refuse("the frame is not a JSON object")
	}
	channel, named := "", true
	if c, ok := raw["channel"]; ok && string(c) != "null" {
		named = json.Unmarshal(c, &channel) == nil
	}
	in, err := finish(channel, raw["header"], raw["content"])
	if err == nil && !named {
		return in, &refused{why: "channel is not a string", req: &in}
	}
	return in, err
}

// decodeBinaryJSON reads a binary frame of the JSON framing, how
// Jupyter's JavaScript client sends a message with buffers when no
// subprotocol was agreed: a big-endian uint32 count n, n uint32 offsets,
// the message's JSON from the first offset, then the buffers (which no
// request of Paddock's kernels takes).
func decodeBinaryJSON(b []byte) (inbound, error) {
	if len(b) < 8 {
		return inbound{}, refuse("the binary frame is too short")
	}
	n := binary.BigEndian.Uint32(b)
	if n < 1 || uint64(n) > uint64(len(b)/4-1) {
		return inbound{}, refuse("the binary frame's part count is out of range")
	}
	start := binary.BigEndian.Uint32(b[4:])
	end := uint32(len(b))
	if n > 1 {
		end = binary.BigEndian.Uint32(b[8:])
	}
	if start < 4*(n+1) || start > end || end > uint32(len(b)) {
		return inbound{}, refuse("the binary frame's offsets are out of range")
	}
	return decodeJSON(b[start:end])
}

// finish checks a message's header and content and settles its channel.
// Of the header only msg_type must be there (a non-empty string); the
// other fields are taken when they are strings, and the date is never
// read, so any form of it (an ISO string with or without zone or
// fraction, a number of seconds, none) passes, as it passes Jupyter
// Server. Absent metadata, parent_header and buffers are never read
// either; absent or null content is {}.
func finish(channel string, rawHeader, content json.RawMessage) (inbound, error) {
	var h map[string]json.RawMessage
	if err := json.Unmarshal(rawHeader, &h); err != nil || h == nil {
		return inbound{}, refuse("the header is not a JSON object")
	}
	str := func(k string) string {
		var v string
		_ = json.Unmarshal(h[k], &v)
		return v
	}
	in := inbound{Channel: channel, RawHeader: rawHeader, Content: content,
		Header: header{MsgID: str("msg_id"), MsgType: str("msg_type"), Username: str("username"),
			Session: str("session"), Version: str("version")}}
	if in.Header.MsgType == "" {
		return inbound{}, refuse("the header has no msg_type")
	}
	if in.Channel == "" {
		in.Channel = defaultChannel(in.Header.MsgType)
	}
	c := bytes.TrimSpace(in.Content)
	switch {
	case len(c) == 0 || string(c) == "null":
		in.Content = emptyObject
	case c[0] != '{' || !json.Valid(c):
		in.Content = emptyObject
		return in, &refused{why: "content is not a JSON object", req: &in}
	}
	return in, nil
}

// defaultChannel is the channel of a message that names none: shell, as
// Jupyter Server takes it, except input_reply, which only stdin takes.
// Jupyter Server 1.x's gateway client (how nbclient, papermill and
// `jupyter execute` reach a gateway) names no channel on any message.
func defaultChannel(msgType string) string {
	if msgType == "input_reply" {
		return "stdin"
	}
	return "shell"
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
		return inbound{}, refuse("the v1 frame is too short")
	}
	n := binary.LittleEndian.Uint64(b)
	if n < 5 || n > uint64(len(b)/8-1) {
		return inbound{}, refuse("the v1 frame's offset count is out of range")
	}
	offs := make([]int, 0, n+1)
	prev := 8 * (int(n) + 1)
	for i := range int(n) {
		o := binary.LittleEndian.Uint64(b[8*(i+1):])
		if o < uint64(prev) || o > uint64(len(b)) {
			return inbound{}, refuse("the v1 frame's offsets are out of order or past its end")
		}
		prev = int(o)
		offs = append(offs, prev)
	}
	if offs[len(offs)-1] != len(b) {
		offs = append(offs, len(b))
	}
	if len(offs) < 6 {
		return inbound{}, refuse("the v1 frame has fewer than five parts")
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
