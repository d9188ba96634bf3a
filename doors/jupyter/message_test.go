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
