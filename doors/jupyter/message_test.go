package jupyterdoor

import (
	"encoding/binary"
	"encoding/json"
	"testing"
)

func TestV1FramingRoundTrip(t *testing.T) {
	m := message("shell", "execute_reply", "ks", json.RawMessage(`{"msg_id":"p1"}`), map[string]any{"status": "ok"})
	b, err := encodeV1(m)
	if err != nil {
		t.Fatal(err)
	}
	if n := binary.LittleEndian.Uint64(b); n != 6 {
		t.Fatalf("offset count %d, want 6 (channel, header, parent, metadata, content, end)", n)
	}
	if end := binary.LittleEndian.Uint64(b[8*6:]); end != uint64(len(b)) {
		t.Fatalf("last offset %d, want the frame's length %d", end, len(b))
	}
	in, err := decodeV1(b)
	if err != nil {
		t.Fatal(err)
	}
	if in.Channel != "shell" || in.Header.MsgType != "execute_reply" || in.Header.Session != "ks" ||
		in.Header.Version != "5.3" || string(in.Content) != `{"status":"ok"}` {
		t.Fatalf("decoded %+v", in)
	}
}

// v1Frame builds a frame the way the JavaScript client does.
func v1Frame(parts ...string) []byte {
	n := len(parts) + 1
	out := make([]byte, 8*(n+1))
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
	return out
}

func TestDecodeV1(t *testing.T) {
	good := v1Frame("control", `{"msg_id":"a","msg_type":"interrupt_request","username":"u","session":"s","date":"d","version":"5.3"}`, `{}`, `{}`, `{}`)
	in, err := decodeV1(good)
	if err != nil || in.Channel != "control" || in.Header.MsgType != "interrupt_request" || in.Header.MsgID != "a" {
		t.Fatalf("good frame: %+v %v", in, err)
	}
	bad := map[string][]byte{
		"empty":              {},
		"count only":         {6, 0, 0, 0, 0, 0, 0, 0},
		"count past the end": append([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}, make([]byte, 64)...),
		"too few parts":      v1Frame("shell", `{"msg_type":"x"}`, `{}`),
		"header not JSON":    v1Frame("shell", `nope`, `{}`, `{}`, `{}`),
		"no msg_type":        v1Frame("shell", `{"msg_id":"a"}`, `{}`, `{}`, `{}`),
	}
	descending := v1Frame("shell", `{"msg_type":"x"}`, `{}`, `{}`, `{}`)
	binary.LittleEndian.PutUint64(descending[16:], 1)
	bad["offsets going back"] = descending
	past := v1Frame("shell", `{"msg_type":"x"}`, `{}`, `{}`, `{}`)
	binary.LittleEndian.PutUint64(past[8*6:], uint64(len(past)+1))
	bad["offset past the end"] = past
	for name, b := range bad {
		if _, err := decodeV1(b); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

func TestLegacyFraming(t *testing.T) {
	in, err := decodeJSON([]byte(`{"channel":"shell","header":{"msg_id":"m","msg_type":"kernel_info_request","username":"u","session":"s","date":"d","version":"5.3"},"parent_header":{},"metadata":{},"content":null,"buffers":[]}`))
	if err != nil || in.Channel != "shell" || string(in.Content) != "{}" || string(in.RawHeader) == "" {
		t.Fatalf("%+v %v", in, err)
	}
	for _, b := range []string{``, `[]`, `{"channel":"shell","header":{}}`, `{"channel":"shell"}`} {
		if _, err := decodeJSON([]byte(b)); err == nil {
			t.Errorf("%q decoded", b)
		}
	}
	out, err := encodeJSON(message("iopub", "status", "ks", in.RawHeader, map[string]any{"execution_state": "idle"}))
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Parent  header         `json:"parent_header"`
		Content map[string]any `json:"content"`
		Buffers []any          `json:"buffers"`
	}
	if err := json.Unmarshal(out, &back); err != nil || back.Parent.MsgID != "m" || back.Content["execution_state"] != "idle" || back.Buffers == nil {
		t.Fatalf("%s: %v", out, err)
	}
}

func TestKernelIDs(t *testing.T) {
	cases := []struct{ session, kernel string }{
		{"053dbcbe978b8012e9f0fe2d698383ca", "053dbcbe-978b-8012-e9f0-fe2d698383ca"},
		{"not-hex", "not-hex"},
		{"053DBCBE978B8012E9F0FE2D698383CA", "053DBCBE978B8012E9F0FE2D698383CA"},
	}
	for _, c := range cases {
		if got := kernelID(c.session); got != c.kernel {
			t.Errorf("kernelID(%q) = %q, want %q", c.session, got, c.kernel)
		}
		if got := sessionID(c.kernel); got != c.session {
			t.Errorf("sessionID(%q) = %q, want %q", c.kernel, got, c.session)
		}
	}
	// Dashes elsewhere are not a kernel id of Paddock's.
	if got := sessionID("053dbcbe9-78b-8012-e9f0-fe2d698383ca"); got != "053dbcbe9-78b-8012-e9f0-fe2d698383ca" {
		t.Errorf("misplaced dashes mapped to %q", got)
	}
}

func TestReplyType(t *testing.T) {
	for req, want := range map[string]string{"kernel_info_request": "kernel_info_reply", "debug_request": "debug_reply", "odd": "odd_reply"} {
		if got := replyType(req); got != want {
			t.Errorf("replyType(%q) = %q, want %q", req, got, want)
		}
	}
}

// The forms Jupyter Server's channels handler takes in the JSON framing
// are taken, with its defaults: only header.msg_type is needed, a
// missing or null channel is shell (input_reply's is stdin), the date is
// any JSON value or none, and absent or null content is {}.
func TestJSONFramingDefaults(t *testing.T) {
	cases := []struct {
		name, frame, channel, content string
	}{
		{"nbclient through the gateway client: no channel, date in seconds",
			`{"header":{"msg_id":"a","msg_type":"kernel_info_request","username":"username","session":"s","date":1796531868.046501,"version":"5.3"},"msg_id":"a","msg_type":"kernel_info_request","parent_header":{},"content":{},"metadata":{}}`,
			"shell", `{}`},
		{"ISO date with zone and fraction", `{"channel":"shell","header":{"msg_type":"kernel_info_request","date":"2026-12-06T04:44:45.518Z"}}`, "shell", `{}`},
		{"ISO date without zone", `{"channel":"shell","header":{"msg_type":"kernel_info_request","date":"2026-12-06T04:44:45.518000"}}`, "shell", `{}`},
		{"ISO date without fraction, with offset", `{"channel":"shell","header":{"msg_type":"kernel_info_request","date":"2026-12-06T04:44:45+02:00"}}`, "shell", `{}`},
		{"integer date", `{"channel":"control","header":{"msg_type":"interrupt_request","date":1796531868}}`, "control", `{}`},
		{"null date", `{"channel":"shell","header":{"msg_type":"kernel_info_request","date":null}}`, "shell", `{}`},
		{"only msg_type", `{"header":{"msg_type":"execute_request"},"content":{"code":"1"}}`, "shell", `{"code":"1"}`},
		{"null channel", `{"channel":null,"header":{"msg_type":"kernel_info_request"}}`, "shell", `{}`},
		{"input_reply without channel", `{"header":{"msg_type":"input_reply"},"content":{"value":"x"}}`, "stdin", `{"value":"x"}`},
		{"null content", `{"header":{"msg_type":"kernel_info_request"},"content":null}`, "shell", `{}`},
		{"numeric msg_id", `{"header":{"msg_type":"kernel_info_request","msg_id":17}}`, "shell", `{}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, err := decodeJSON([]byte(c.frame))
			if err != nil {
				t.Fatal(err)
			}
			if in.Channel != c.channel || string(in.Content) != c.content {
				t.Errorf("channel %q content %s, want %q %s", in.Channel, in.Content, c.channel, c.content)
			}
			// The reply's parent is the header exactly as sent.
			var sent struct {
				Header json.RawMessage `json:"header"`
			}
			_ = json.Unmarshal([]byte(c.frame), &sent)
			if string(in.RawHeader) != string(sent.Header) {
				t.Errorf("raw header %s, want %s", in.RawHeader, sent.Header)
			}
		})
	}
}

// A binary frame without the v1 subprotocol is Jupyter's older framing
// of a message with buffers: big-endian count and offsets, the JSON
// message first. Built here as jupyter_server's serialize_binary_message
// lays it out.
func TestBinaryJSONFraming(t *testing.T) {
	msg := `{"channel":"shell","header":{"msg_id":"b","msg_type":"comm_info_request"},"parent_header":{},"metadata":{},"content":{"target_name":"x"},"buffers":[]}`
	buf := "\x01\x02\x03"
	frame := []byte{0, 0, 0, 2, 0, 0, 0, 12}
	frame = binary.BigEndian.AppendUint32(frame, uint32(12+len(msg)))
	frame = append(append(frame, msg...), buf...)
	in, err := decodeBinaryJSON(frame)
	if err != nil || in.Channel != "shell" || in.Header.MsgType != "comm_info_request" || string(in.Content) != `{"target_name":"x"}` {
		t.Fatalf("%+v %v", in, err)
	}
	// Only the JSON part: one offset.
	one := append([]byte{0, 0, 0, 1, 0, 0, 0, 8}, msg...)
	if in, err := decodeBinaryJSON(one); err != nil || in.Header.MsgID != "b" {
		t.Fatalf("one part: %+v %v", in, err)
	}
	for name, b := range map[string][]byte{
		"offset inside the offsets": {0, 0, 0, 1, 0, 0, 0, 4, '{', '}'},
		"count past the end":        {0, 0, 0, 9, 0, 0, 0, 8, '{', '}'},
		"no parts":                  {0, 0, 0, 0, 0, 0, 0, 8, '{', '}'},
	} {
		if _, err := decodeBinaryJSON(b); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}
