package mcpdoor

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddock-dev/paddock/core"
)

// initialize is an MCP initialize request body.
const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`

func post(t *testing.T, url, host, token, body string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if host != "" {
		req.Host = host
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func TestNoTokenIs401(t *testing.T) {
	f := &fakeCore{auth: true}
	srv := serve(t, f, Options{})
	for _, tc := range []struct{ name, token, want string }{
		{"none", "", `{"error":{"code":-32600,"data":{"code":"invalid_token"},"message":"invalid_token: missing bearer token (send Authorization: Bearer \u003cJWT\u003e)"},"id":null,"jsonrpc":"2.0"}`},
		{"bad", "bad", `{"error":{"code":-32600,"data":{"code":"invalid_token"},"message":"invalid_token: token signature is invalid"},"id":null,"jsonrpc":"2.0"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, h, body := post(t, srv.URL+Path, "", tc.token, initialize)
			want := tc.want
			if code != http.StatusUnauthorized || body != want || h.Get("WWW-Authenticate") != `Bearer realm="paddock"` {
				t.Fatalf("HTTP %d %s %v, want 401 %s", code, body, h, want)
			}
		})
	}
	code, h, _ := post(t, srv.URL+Path, "", "alice", initialize)
	if code != http.StatusOK {
		t.Fatalf("with a token: HTTP %d, want 200", code)
	}
	if got := h.Get("RateLimit-Limit") + " " + h.Get("RateLimit-Remaining") + " " + h.Get("RateLimit-Reset"); got != "20 19 2" {
		t.Errorf("RateLimit headers %q, want \"20 19 2\"", got)
	}
	if f.admits != 1 {
		t.Fatalf("admitted %d requests, want 1 (refused ones are not charged)", f.admits)
	}
}

func TestToolCallsActForTheTokensTenant(t *testing.T) {
	f := &fakeCore{auth: true}
	srv := serve(t, f, Options{})
	cs := connect(t, srv, "alice")
	call(t, cs, "list_files", map[string]any{"session_id": "x"})
	if len(f.callers) != 1 || f.callers[0].Tenant != "alice" || f.callers[0].Door != "mcp" {
		t.Fatalf("callers %+v, want alice over mcp", f.callers)
	}
	// Another tenant's token cannot use alice's MCP session.
	body := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+Path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer mallory")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("mallory on alice's MCP session: HTTP %d, want 403", resp.StatusCode)
	}
}

func TestSessionsCloseWithTheMCPSession(t *testing.T) {
	f := &fakeCore{closes: make(chan string, 2)}
	srv := serve(t, f, Options{})
	cs := connect(t, srv, "")
	for range 2 {
		call(t, cs, "create_session", map[string]any{"language": "python"})
	}
	call(t, cs, "close_session", map[string]any{"session_id": "s0"})
	awaitClosed(t, f, "s0")
	if err := cs.Close(); err != nil { // DELETE ends the MCP session
		t.Fatal(err)
	}
	// The door closes s1 once the server side has seen the end: wait for it
	// (the test's own deadline is the safety net).
	awaitClosed(t, f, "s1")
}

func TestToolSchemas(t *testing.T) {
	srv := serve(t, &fakeCore{}, Options{})
	get := func(query string) (int, map[string]any) {
		resp, err := http.Get(srv.URL + "/v1/tools" + query)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, body
	}
	for _, tc := range []struct{ query, first string }{
		{"", `{"function":{"description":`},
		{"?format=openai", `{"function":{"description":`},
		{"?format=anthropic", `{"description":`},
		{"?format=mcp", `{"description":`},
	} {
		code, body := get(tc.query)
		tools, _ := body["tools"].([]any)
		if code != http.StatusOK || len(tools) != 10 {
			t.Fatalf("%s: HTTP %d, %d tools", tc.query, code, len(tools))
		}
		first, _ := json.Marshal(tools[0])
		if !strings.HasPrefix(string(first), tc.first) {
			t.Errorf("%s: first tool %s", tc.query, first)
		}
	}
	_, body := get("?format=anthropic")
	first := body["tools"].([]any)[0].(map[string]any)
	schema, _ := json.Marshal(first["input_schema"])
	if first["name"] != "run_code" || !strings.Contains(string(schema), `"required":["language","code"]`) {
		t.Errorf("anthropic run_code %v", first)
	}
	_, body = get("?format=openai")
	fn := body["tools"].([]any)[0].(map[string]any)
	if fn["type"] != "function" {
		t.Errorf("openai tool %v", fn)
	}
	code, body := get("?format=gemini")
	if code != http.StatusBadRequest || body["code"] != "invalid_request" || body["message"] != `format "gemini" is not openai, anthropic or mcp` {
		t.Errorf("bad format: HTTP %d %v", code, body)
	}
}

func TestSessionsCloseWhenTheMCPSessionIdles(t *testing.T) {
	f := &fakeCore{closes: make(chan string, 8)}
	srv := serve(t, f, Options{SessionIdle: 100 * time.Millisecond})
	// A slow machine may let the MCP session idle out between two of the
	// client's requests: then start again, until create_session got in.
	deadline := time.Now().Add(time.Minute) // a safety net: a broken door fails, not hangs
	for {
		if time.Now().After(deadline) {
			t.Fatal("create_session never got in within a minute of tries")
		}
		c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
		cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL + Path}, nil)
		if err != nil {
			continue
		}
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "create_session", Arguments: map[string]any{"language": "python"}})
		if err == nil && !res.IsError {
			break
		}
		_ = cs.Close()
	}
	// No more requests: the MCP session ends once idle, and its session
	// with it.
	f.mu.Lock()
	last := f.created[len(f.created)-1]
	f.mu.Unlock()
	awaitClosed(t, f, last)
}

func TestGetOpensNoStream(t *testing.T) {
	srv := serve(t, &fakeCore{auth: true}, Options{})
	resp, err := http.Get(srv.URL + Path)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST, DELETE" {
		t.Fatalf("GET /mcp: HTTP %d, Allow %q; want 405, POST, DELETE", resp.StatusCode, resp.Header.Get("Allow"))
	}
}

// A session whose create finished after its MCP session ended is closed
// too.
func TestLateSessionIsClosed(t *testing.T) {
	f := &fakeCore{closes: make(chan string, 1)}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = cs.Close()
	_ = ss.Wait() // the MCP session has ended
	newOwned(f, nil).add(ss, "late", core.Caller{})
	awaitClosed(t, f, "late")
}
