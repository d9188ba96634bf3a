package jupyterdoor

import (
	"encoding/json"
	"strings"
	"testing"
)

func testConn(client string) *conn {
	return &conn{client: client, out: make(chan []byte, 8), done: make(chan struct{})}
}

// A client connected at a restart that comes back by the same session id
// is told "starting" once, under the restart's parent; another client,
// or the same one again, is told nothing.
func TestRestartReplayedToAReconnectingClient(t *testing.T) {
	hs := newHubs()
	old := testConn("c1")
	h := hs.join("alice", "k1", old)
	old.hub = h
	hs.noteRestart(h, json.RawMessage(`{"msg_id":"m1"}`))
	hs.leave(h, old)

	back, other := testConn("c1"), testConn("c2")
	for _, c := range []*conn{back, other} {
		c.hub = hs.join("alice", "k1", c)
		hs.replayTo(c)
	}
	hs.replayTo(back)
	if len(back.out) != 1 {
		t.Fatalf("the reconnecting client got %d messages, want 1", len(back.out))
	}
	got := string(<-back.out)
	if !strings.Contains(got, `"execution_state":"starting"`) || !strings.Contains(got, `"msg_id":"m1"`) || !strings.Contains(got, `"channel":"iopub"`) {
		t.Errorf("replayed %s, want iopub status starting under the restart's parent", got)
	}
	if len(other.out) != 0 {
		t.Errorf("a client not connected at the restart got %d messages", len(other.out))
	}
}
