package mcpdoor

import (
	"net/http"
	"testing"
	"time"
)

// Each MCP session holds one of its tenant's connections: one initialize
// over the cap is refused with 429, another tenant still gets in, and
// ending a session frees its slot.
func TestInitializeOverTheConnectionCap(t *testing.T) {
	f := &fakeCore{auth: true, maxConns: 2, freed: make(chan string, 8)}
	srv := serve(t, f, Options{})
	first := connect(t, srv, "alice")
	connect(t, srv, "alice")

	code, h, body := post(t, srv.URL+Path, "", "alice", initialize)
	want := `{"error":{"code":-32600,"data":{"code":"too_many_connections"},"message":"too_many_connections: you hold 2 connections"},"id":null,"jsonrpc":"2.0"}`
	if code != http.StatusTooManyRequests || h.Get("Retry-After") != "5" || body != want {
		t.Fatalf("third initialize of alice: HTTP %d, Retry-After %q, %s\nwant 429, 5, %s", code, h.Get("Retry-After"), body, want)
	}
	connect(t, srv, "bob")
	if got := f.holding("alice"); got != 2 {
		t.Fatalf("alice holds %d connections, want 2 (the client's server/discover probe keeps none)", got)
	}

	if err := first.Close(); err != nil { // DELETE ends the MCP session
		t.Fatal(err)
	}
	awaitHolding(t, f, "alice", 1)
	connect(t, srv, "alice")
	if got := f.holding("alice"); got != 2 {
		t.Fatalf("alice holds %d connections after one ended and one opened, want 2", got)
	}
}

// A POST that opens no lasting session keeps no hold; requests of an open session take none.
func TestRequestsWithoutASessionKeepNoHold(t *testing.T) {
	f := &fakeCore{auth: true, maxConns: 1, freed: make(chan string, 8)}
	srv := serve(t, f, Options{})
	// The SDK answers it in a session it closes at once.
	post(t, srv.URL+Path, "", "alice", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	awaitHolding(t, f, "alice", 0)
	cs := connect(t, srv, "alice")
	call(t, cs, "list_files", map[string]any{"session_id": "x"})
	call(t, cs, "list_files", map[string]any{"session_id": "x"})
	if got := f.holding("alice"); got != 1 {
		t.Fatalf("one MCP session with tool calls holds %d connections, want 1", got)
	}
}

// An MCP session that idles out frees its slot.
func TestIdleMCPSessionFreesItsSlot(t *testing.T) {
	f := &fakeCore{auth: true, maxConns: 1, freed: make(chan string, 8)}
	srv := serve(t, f, Options{SessionIdle: 100 * time.Millisecond})
	code, _, body := post(t, srv.URL+Path, "", "alice", initialize)
	if code != http.StatusOK {
		t.Fatalf("initialize: HTTP %d %s", code, body)
	}
	awaitHolding(t, f, "alice", 0) // nothing more is sent: the session idles out
	if code, _, body := post(t, srv.URL+Path, "", "alice", initialize); code != http.StatusOK {
		t.Fatalf("initialize after the first session idled out: HTTP %d %s", code, body)
	}
}
