package jupyterdoor

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// capture is one file of testdata/wire: frames a real client sent,
// as Paddock's kernel WebSocket read them.
type capture struct {
	Client  string   `json:"client"`
	Framing string   `json:"framing"` // "json" (text frames) or "v1" (binary, base64 here)
	Frames  []string `json:"frames"`
}

// wireTimeout bounds each wait for an answer: a safety net, never the
// thing under test (every answer here is sent as soon as the frame is read).
const wireTimeout = 10 * time.Second

// wireConn is a test client's kernel WebSocket.
type wireConn struct {
	t  *testing.T
	ws *websocket.Conn
	v1 bool
}

func dialWire(t *testing.T, srv *httptest.Server, token, id string, v1 bool) *wireConn {
	t.Helper()
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/api/kernels/" + id + "/channels?token=" + token
	var opts websocket.DialOptions
	if v1 {
		opts.Subprotocols = []string{subprotocolV1}
	}
	ws, _, err := websocket.Dial(t.Context(), url, &opts)
	if err != nil {
		t.Fatalf("dialing: %v", err)
	}
	t.Cleanup(func() { _ = ws.CloseNow() })
	if got := ws.Subprotocol() == subprotocolV1; got != v1 {
		t.Fatalf("subprotocol %q, want v1 %v", ws.Subprotocol(), v1)
	}
	return &wireConn{t: t, ws: ws, v1: v1}
}

func (c *wireConn) send(typ websocket.MessageType, b []byte) {
	c.t.Helper()
	if err := c.ws.Write(c.t.Context(), typ, b); err != nil {
		c.t.Fatalf("writing: %v", err)
	}
}

// wireMsg is a message from the door, in either framing.
type wireMsg struct {
	Channel  string
	Top      map[string]json.RawMessage // the JSON framing's object (nil in v1)
	Header   header
	ParentID string
	Content  map[string]any
}

// next reads the door's next message, or returns the error that ended
// the connection (a websocket.CloseError when the door closed it).
func (c *wireConn) next() (wireMsg, error) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.t.Context(), wireTimeout)
	defer cancel()
	typ, b, err := c.ws.Read(ctx)
	if err != nil {
		return wireMsg{}, err
	}
	var m wireMsg
	var parent struct {
		MsgID string `json:"msg_id"`
	}
	if c.v1 {
		if typ != websocket.MessageBinary {
			c.t.Fatalf("a %v frame on a v1 connection", typ)
		}
		in, err := decodeV1(b)
		if err != nil {
			c.t.Fatalf("the door's v1 frame does not decode: %v", err)
		}
		m.Channel, m.Header = in.Channel, in.Header
		parts := v1Parts(c.t, b)
		_ = json.Unmarshal(parts[2], &parent)
		if err := json.Unmarshal(parts[4], &m.Content); err != nil {
			c.t.Fatalf("content %s: %v", parts[4], err)
		}
	} else {
		if typ != websocket.MessageText {
			c.t.Fatalf("a %v frame on a JSON connection", typ)
		}
		if err := json.Unmarshal(b, &m.Top); err != nil {
			c.t.Fatalf("the door's frame is not a JSON object: %s", b)
		}
		for k, v := range map[string]any{"channel": &m.Channel, "header": &m.Header, "parent_header": &parent, "content": &m.Content} {
			if err := json.Unmarshal(m.Top[k], v); err != nil {
				c.t.Fatalf("%s of %s: %v", k, b, err)
			}
		}
	}
	m.ParentID = parent.MsgID
	return m, nil
}

// v1Parts splits a v1 frame (the door's own, so well formed).
func v1Parts(t *testing.T, b []byte) [][]byte {
	t.Helper()
	n := int(le64(b))
	var parts [][]byte
	for i := 1; i < n; i++ {
		parts = append(parts, b[le64(b[8*i:]):le64(b[8*(i+1):])])
	}
	return parts
}

func le64(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// answerTo reads messages until one on a channel other than iopub whose
// parent is msgID, and returns it.
func (c *wireConn) answerTo(msgID string) wireMsg {
	c.t.Helper()
	for {
		m, err := c.next()
		if err != nil {
			c.t.Fatalf("waiting for the answer to %s: %v", msgID, err)
		}
		if m.Channel != "iopub" && m.ParentID == msgID {
			return m
		}
	}
}

// probe is a kernel_info_request of the door's tests, in the framing of c.
func (c *wireConn) probe(id string) {
	c.t.Helper()
	h := `{"msg_id":"` + id + `","msg_type":"kernel_info_request","username":"t","session":"t","date":"2026-12-06T00:00:00Z","version":"5.3"}`
	if c.v1 {
		c.send(websocket.MessageBinary, v1Frame("shell", h, `{}`, `{}`, `{}`))
		return
	}
	c.send(websocket.MessageText, []byte(`{"channel":"shell","header":`+h+`,"parent_header":{},"metadata":{},"content":{}}`))
}

// requestOf reads the header and channel a captured frame carries, the
// way the client meant them (not through the door's decoder).
func requestOf(t *testing.T, framing string, frame []byte) (channel string, h map[string]any) {
	t.Helper()
	var raw []byte
	if framing == "v1" {
		parts := v1Parts(t, frame)
		channel, raw = string(parts[0]), parts[1]
	} else {
		var m struct {
			Channel *string         `json:"channel"`
			Header  json.RawMessage `json:"header"`
		}
		if err := json.Unmarshal(frame, &m); err != nil {
			t.Fatal(err)
		}
		if m.Channel != nil {
			channel = *m.Channel
		}
		raw = m.Header
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Fatal(err)
	}
	return channel, h
}

// TestCapturedClientMessages replays what real clients sent (testdata/wire,
// each file naming its client and version) to the door over the fake
// runtime: every frame is taken, and every request answered on the
// channel the client waits on, parented on it. A JSON-framing answer
// carries msg_id and msg_type at the top, as jupyter_client's gateway
// client reads them.
func TestCapturedClientMessages(t *testing.T) {
	files, err := filepath.Glob("testdata/wire/*.json")
	if err != nil || len(files) < 5 {
		t.Fatalf("captures: %v %v", files, err)
	}
	srv, svc := holdServer(t, 0)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cp capture
		if err := json.Unmarshal(b, &cp); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			token, id := kernelFor(t, svc, "alice")
			c := dialWire(t, srv, token, id, cp.Framing == "v1")
			for i, fr := range cp.Frames {
				frame, typ := []byte(fr), websocket.MessageText
				if cp.Framing == "v1" {
					if frame, err = base64.StdEncoding.DecodeString(fr); err != nil {
						t.Fatal(err)
					}
					typ = websocket.MessageBinary
				}
				channel, h := requestOf(t, cp.Framing, frame)
				msgType, _ := h["msg_type"].(string)
				msgID, _ := h["msg_id"].(string)
				c.send(typ, frame)
				if msgType == "input_reply" {
					// Nothing waits for input here, and no kernel answers
					// an input_reply: it is taken if the next request is
					// answered with no refusal before it.
					probe := "probe-after-input"
					c.probe(probe)
					if m := c.answerTo(probe); m.Header.MsgType != "kernel_info_reply" {
						t.Errorf("frame %d (input_reply): then %s %v", i, m.Header.MsgType, m.Content)
					}
					continue
				}
				m := c.answerTo(msgID)
				want := channel
				if want == "" {
					want = "shell" // what Jupyter Server takes a message without one for
				}
				if m.Channel != want || m.Header.MsgType != replyType(msgType) {
					t.Errorf("frame %d (%s on %q): answered %s on %s", i, msgType, channel, m.Header.MsgType, m.Channel)
				}
				if m.Content["ename"] == "BadMessage" || m.Content["ename"] == "NotImplemented" {
					t.Errorf("frame %d (%s): refused: %v", i, msgType, m.Content)
				}
				if msgType == "kernel_info_request" && m.Content["status"] != "ok" {
					t.Errorf("frame %d: kernel_info_reply %v", i, m.Content)
				}
				if !c.v1 {
					var topID, topType string
					_ = json.Unmarshal(m.Top["msg_id"], &topID)
					_ = json.Unmarshal(m.Top["msg_type"], &topType)
					if topID == "" || topID != m.Header.MsgID || topType != m.Header.MsgType {
						t.Errorf("frame %d: top-level msg_id %q msg_type %q beside header %+v", i, topID, topType, m.Header)
					}
				}
			}
		})
	}
}

// TestRefusedMessagesAreAnswered sends what the door refuses: each is
// answered the moment it is read, with an error reply parented on the
// request when its header could be read, else with a close frame giving
// the reason; the client is never left waiting. (The wait below is a
// safety net: the answer is written straight from the read loop, with no
// timer on its path.)
func TestRefusedMessagesAreAnswered(t *testing.T) {
	hdr := func(id, typ string) string {
		return `{"msg_id":"` + id + `","msg_type":"` + typ + `","username":"u","session":"s","date":1796531868.0465,"version":"5.3"}`
	}
	cases := []struct {
		name  string
		v1    bool
		typ   websocket.MessageType
		frame []byte
		// an error reply: its channel, type and ename; or, with close set,
		// a close frame whose reason holds close.
		channel, reply, ename string
		close                 string
	}{
		{name: "unknown msg_type", typ: websocket.MessageText,
			frame:   []byte(`{"header":` + hdr("r1", "frobnicate_request") + `,"content":{}}`),
			channel: "shell", reply: "frobnicate_reply", ename: "NotImplemented"},
		{name: "unknown control msg_type", typ: websocket.MessageText,
			frame:   []byte(`{"channel":"control","header":` + hdr("r2", "frobnicate_request") + `}`),
			channel: "control", reply: "frobnicate_reply", ename: "NotImplemented"},
		{name: "content not an object", typ: websocket.MessageText,
			frame:   []byte(`{"header":` + hdr("r3", "execute_request") + `,"content":"print(1)"}`),
			channel: "shell", reply: "execute_reply", ename: "BadMessage"},
		{name: "no such channel", typ: websocket.MessageText,
			frame:   []byte(`{"channel":"iopub","header":` + hdr("r4", "execute_request") + `,"content":{"code":"1"}}`),
			channel: "shell", reply: "execute_reply", ename: "BadMessage"},
		{name: "channel not a string", typ: websocket.MessageText,
			frame:   []byte(`{"channel":7,"header":` + hdr("r5", "kernel_info_request") + `}`),
			channel: "shell", reply: "kernel_info_reply", ename: "BadMessage"},
		{name: "a request on stdin", typ: websocket.MessageText,
			frame:   []byte(`{"channel":"stdin","header":` + hdr("r6", "execute_request") + `}`),
			channel: "stdin", reply: "execute_reply", ename: "BadMessage"},
		{name: "v1 content not JSON", v1: true, typ: websocket.MessageBinary,
			frame:   v1Frame("shell", hdr("r7", "execute_request"), `{}`, `{}`, `{"code":`),
			channel: "shell", reply: "execute_reply", ename: "BadMessage"},
		{name: "invalid JSON", typ: websocket.MessageText, frame: []byte(`{"header":{"msg_type":`), close: "not a JSON object"},
		{name: "a JSON array", typ: websocket.MessageText, frame: []byte(`[1,2]`), close: "not a JSON object"},
		{name: "no header", typ: websocket.MessageText, frame: []byte(`{"channel":"shell","content":{}}`), close: "header is not a JSON object"},
		{name: "no msg_type", typ: websocket.MessageText, frame: []byte(`{"header":{"msg_id":"x"}}`), close: "no msg_type"},
		{name: "binary JSON frame past its end", typ: websocket.MessageBinary, frame: []byte{0, 0, 0, 1, 0, 0, 0, 200, '{', '}'}, close: "offsets are out of range"},
		{name: "v1 frame too short", v1: true, typ: websocket.MessageBinary, frame: []byte{6, 0, 0}, close: "too short"},
		{name: "v1 text frame not JSON", v1: true, typ: websocket.MessageText, frame: []byte(`shell`), close: "not a JSON object"},
	}
	srv, svc := holdServer(t, 0)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// A tenant of its own for each case: a tenant holds 8 sessions at most.
			token, id := kernelFor(t, svc, "tenant"+strconv.Itoa(i))
			c := dialWire(t, srv, token, id, tc.v1)
			c.send(tc.typ, tc.frame)
			if tc.close != "" {
				for {
					_, err := c.next()
					var ce websocket.CloseError
					if errors.As(err, &ce) {
						if ce.Code != websocket.StatusInvalidFramePayloadData || !strings.Contains(ce.Reason, tc.close) {
							t.Errorf("closed with %d %q, want %d and a reason with %q", ce.Code, ce.Reason, websocket.StatusInvalidFramePayloadData, tc.close)
						}
						return
					}
					if err != nil {
						t.Fatalf("the connection ended without a close frame: %v", err)
					}
				}
			}
			m := c.answerTo(hdrID(tc.frame))
			if m.Channel != tc.channel || m.Header.MsgType != tc.reply || m.Content["status"] != "error" || m.Content["ename"] != tc.ename {
				t.Errorf("answered %s on %s: %v; want %s on %s, ename %s", m.Header.MsgType, m.Channel, m.Content, tc.reply, tc.channel, tc.ename)
			}
			if ev, _ := m.Content["evalue"].(string); ev == "" {
				t.Errorf("the error reply says nothing: %v", m.Content)
			}
			// The connection goes on: the next request is answered.
			c.probe("after")
			if m := c.answerTo("after"); m.Header.MsgType != "kernel_info_reply" {
				t.Errorf("after the refusal: %s", m.Header.MsgType)
			}
		})
	}
}

// hdrID is the msg_id a test frame's header carries ("r1"…).
func hdrID(frame []byte) string {
	s := string(frame)
	i := strings.Index(s, `"msg_id":"`)
	if i < 0 {
		return ""
	}
	s = s[i+len(`"msg_id":"`):]
	return s[:strings.IndexByte(s, '"')]
}

// An open kernel socket is pinged, as Jupyter Server pings its own, so
// that a client reading with a timeout (jupyter_client's gateway client
// gives up after 40 s without a frame) outlives a quiet cell. The client
// here speaks raw WebSocket to see the ping frame itself.
func TestKernelSocketIsPinged(t *testing.T) {
	srv, svc := doorServer(t, 0, Options{PingInterval: 20 * time.Millisecond})
	token, id := kernelFor(t, svc, "alice")
	nc, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(wireTimeout)) // a safety net
	fmt.Fprintf(nc, "GET /api/kernels/%s/channels?token=%s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", id, token, nc.RemoteAddr())
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	// The door sends nothing unasked but pings: the first frame is one
	// (FIN, opcode 9, unmasked).
	var head [2]byte
	if _, err := io.ReadFull(br, head[:]); err != nil {
		t.Fatalf("no frame: %v", err)
	}
	if head[0] != 0x89 {
		t.Fatalf("first frame %#x, want a ping (0x89)", head[0])
	}
}
