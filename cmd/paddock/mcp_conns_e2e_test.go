package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpInitialize posts one MCP initialize for token and returns the
// status, Retry-After and body.
func mcpInitialize(t *testing.T, url, token string) (int, string, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), string(b)
}

// --tenant-max-connections caps one tenant's open MCP sessions on a real
// server: the real TypeScript client's connect over the cap is refused
// with 429, another tenant still gets in, and ending a session frees its
// slot.
func TestE2EMCPConnections(t *testing.T) {
	clearAuthEnv(t)
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("an-mcp-e2e-secret-of-at-least-32-bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newE2EWith(t, "--jwt-hs256-secret-file="+secret, "--tenant-max-connections=1")
	url := e.srv.URL + "/mcp"
	alice, bob := mcpToken(t, secret, "alice"), mcpToken(t, secret, "bob")

	held, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerTransport(alice)}}, nil)
	if err != nil {
		t.Fatalf("alice's first MCP session: %v", err)
	}

	type connectOut struct {
		Connected bool   `json:"connected"`
		Code      int    `json:"code"`
		Message   string `json:"message"`
	}
	var refused connectOut
	node(t, &refused, "mcp_client.mjs", "noauth", url, alice)
	if refused.Connected || refused.Code != http.StatusTooManyRequests || !strings.Contains(refused.Message, "too_many_connections") {
		t.Fatalf("alice's second MCP session with the TypeScript client: %+v, want refused with 429 too_many_connections", refused)
	}
	code, retry, body := mcpInitialize(t, url, alice)
	if code != http.StatusTooManyRequests || retry != "5" || !strings.Contains(body, `"data":{"code":"too_many_connections"}`) {
		t.Fatalf("alice's second initialize: HTTP %d, Retry-After %q, %s; want 429, 5, too_many_connections", code, retry, body)
	}
	var other connectOut
	node(t, &other, "mcp_client.mjs", "noauth", url, bob)
	if !other.Connected {
		t.Fatalf("bob's MCP session while alice is at her cap: %+v, want connected", other)
	}

	if err := held.Close(); err != nil { // DELETE /mcp
		t.Fatal(err)
	}
	// The slot frees once the server has seen the session end: retry until
	// it has, polling (the minute is a safety net).
	deadline := time.Now().Add(time.Minute)
	for {
		code, _, body := mcpInitialize(t, url, alice)
		if code == http.StatusOK {
			break
		}
		if code != http.StatusTooManyRequests || time.Now().After(deadline) {
			t.Fatalf("alice's initialize after her session ended: HTTP %d %s", code, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
