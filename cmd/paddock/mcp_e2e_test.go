package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/store"
)

// node runs a script of doors/clients with args and decodes the one JSON
// object it prints. Node and the installed clients are required under
// `make test`; plain `go test` skips without them.
func node(t *testing.T, into any, script string, args ...string) {
	t.Helper()
	out, err := runClient(t, nil, needClients(t), append([]string{script}, args...)...)
	if err != nil {
		t.Fatalf("node %s: %v", script, err)
	}
	if err := json.Unmarshal(out, into); err != nil {
		t.Fatalf("node %s printed %s: %v", script, out, err)
	}
}

// mcpClientOut is what doors/clients/mcp_client.mjs reports.
type mcpClientOut struct {
	Tools []struct {
		Name     string   `json:"name"`
		Input    []string `json:"input"`
		Required []string `json:"required"`
		Output   bool     `json:"output"`
	} `json:"tools"`
	RunCodeDescription string `json:"runCodeDescription"`
	Run                struct {
		IsError bool     `json:"isError"`
		Texts   []string `json:"texts"`
		Stdout  string   `json:"stdout"`
		Exit    int      `json:"exit"`
	} `json:"run"`
	Node  toolTexts `json:"node"`
	State struct {
		toolTexts
		Result string `json:"result"`
		Count  int    `json:"count"`
	} `json:"state"`
	Plot struct {
		IsError  bool     `json:"isError"`
		Types    []string `json:"types"`
		MIMEType string   `json:"mimeType"`
		Head     string   `json:"head"`
	} `json:"plot"`
	Error struct {
		toolTexts
		Name string `json:"name"`
	} `json:"error"`
	Files struct {
		Written map[string]any `json:"written"`
		Listed  []string       `json:"listed"`
		Read    []string       `json:"read"`
	} `json:"files"`
	Stuck struct {
		toolTexts
		Reason    string   `json:"reason"`
		StateLost bool     `json:"stateLost"`
		Restarted bool     `json:"restarted"`
		Next      []string `json:"next"`
		NextCount int      `json:"nextCount"`
		Gone      string   `json:"gone"`
	} `json:"stuck"`
	Left       string         `json:"left"`
	NodeState  toolTexts      `json:"nodeState"`
	Closed     map[string]any `json:"closed"`
	AfterClose toolTexts      `json:"afterClose"`
}

// mcpToolNames are the MCP door's tools, sorted.
var mcpToolNames = []string{"close_session", "create_session", "execute", "fork_session", "list_files", "pause_session",
	"read_file", "resume_session", "run_code", "write_file"}

type toolTexts struct {
	IsError bool     `json:"isError"`
	Texts   []string `json:"texts"`
}

// checkMCPClient asserts on everything the TypeScript SDK client saw.
func checkMCPClient(t *testing.T, e *e2e, out mcpClientOut) {
	t.Helper()
	var tools []string
	for _, tl := range out.Tools {
		tools = append(tools, tl.Name+"("+strings.Join(tl.Required, ",")+")")
		if !tl.Output {
			t.Errorf("%s has no output schema", tl.Name)
		}
	}
	want := []string{"close_session(session_id)", "create_session(language)", "execute(session_id,code)", "fork_session(session_id,count)",
		"list_files(session_id)", "pause_session(session_id)", "read_file(session_id,path)", "resume_session(session_id)",
		"run_code(language,code)", "write_file(session_id,path,content)"}
	if !slices.Equal(tools, want) {
		t.Errorf("tools %q, want %q", tools, want)
	}
	for _, s := range []string{"no network access", "- python: ", "matplotlib 3.6.3", "pandas ", "- node: node v18.", "/workspace", "512 MB memory"} {
		if !strings.Contains(out.RunCodeDescription, s) {
			t.Errorf("run_code's description lacks %q:\n%s", s, out.RunCodeDescription)
		}
	}
	if out.Run.IsError || !slices.Equal(out.Run.Texts, []string{"42\n"}) || out.Run.Stdout != "42\n" || out.Run.Exit != 0 {
		t.Errorf("run_code print(6*7): %+v", out.Run)
	}
	if out.Node.IsError || !slices.Equal(out.Node.Texts, []string{"2,4,6\n"}) {
		t.Errorf("run_code node: %+v", out.Node)
	}
	if out.State.IsError || out.State.Result != "42" || !slices.Equal(out.State.Texts, []string{"42"}) || out.State.Count != 2 {
		t.Errorf("x = 41 then x + 1: %+v", out.State)
	}
	if out.Plot.IsError || !slices.Equal(out.Plot.Types, []string{"image"}) || out.Plot.MIMEType != "image/png" || out.Plot.Head != "89504e470d0a1a0a" {
		t.Errorf("plot: %+v, want one image/png block starting with the PNG signature", out.Plot)
	}
	if !out.Error.IsError || out.Error.Name != "ZeroDivisionError" || len(out.Error.Texts) != 1 ||
		!strings.Contains(out.Error.Texts[0], "Traceback") || !strings.HasSuffix(out.Error.Texts[0], "ZeroDivisionError: division by zero") {
		t.Errorf("1/0: %+v, want isError with the traceback", out.Error)
	}
	if out.Files.Written["path"] != "notes/a.txt" || out.Files.Written["size"] != 5.0 ||
		!slices.Equal(out.Files.Listed, []string{"a.txt"}) || !slices.Equal(out.Files.Read, []string{"hello"}) {
		t.Errorf("files: %+v", out.Files)
	}
	// A cell stuck in native code: the answer says the state is gone and
	// the kernel restarted; the next cell works on a fresh one.
	lostText := "The session's state was lost: the cell did not stop when interrupted at its timeout, so its kernel was killed. " +
		"The kernel was restarted: the session goes on under the same session_id, but its variables, imports and the files in /workspace are gone; redo what later cells need."
	if st := out.Stuck; !st.IsError || st.Reason != "timeout" || !st.StateLost || !st.Restarted || !slices.Contains(st.Texts, lostText) ||
		!slices.Equal(st.Next, []string{"2"}) || st.NextCount != 1 || st.Gone != "NameError" {
		t.Errorf("stuck cell: %+v, want timeout, state lost and restarted, then 2 at count 1 and x a NameError", st)
	}
	if out.NodeState.IsError || !slices.Equal(out.NodeState.Texts, []string{"42"}) {
		t.Errorf("node session const y then y * 2 + 2: %+v", out.NodeState)
	}
	if out.Closed["closed"] != true {
		t.Errorf("close_session: %v", out.Closed)
	}
	if !out.AfterClose.IsError || len(out.AfterClose.Texts) != 1 || !strings.HasPrefix(out.AfterClose.Texts[0], "session_not_found: ") {
		t.Errorf("execute after close_session: %+v", out.AfterClose)
	}
	// The node session the client left open closed with its MCP session.
	awaitNoSessions(t, e)
}

// awaitNoSessions waits until no session is open, with a generous
// safety net: closing takes a second or two.
func awaitNoSessions(t *testing.T, e *e2e) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	for {
		all, err := e.st.Core.AllSessions(core.Caller{Scopes: []string{core.ScopeAdmin}})
		if err != nil {
			t.Fatal(err)
		}
		if len(all) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("sessions still open 2 minutes after their MCP session ended: %+v", all)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// The MCP door with auth off, driven by the real clients: the
// TypeScript SDK over Streamable HTTP, mcp-inspector's CLI and the AI
// SDK's tool loop with a mock model.
func TestE2EMCP(t *testing.T) {
	e := newE2E(t)
	url := e.srv.URL + "/mcp"

	t.Run("typescript sdk over http", func(t *testing.T) {
		var out mcpClientOut
		node(t, &out, "mcp_client.mjs", "http", url)
		checkMCPClient(t, e, out)
		e.expectDoorRows(t, "mcp", store.KindRun, "", "ok")
		e.expectDoorRows(t, "mcp", store.KindCell, "", "ok", "timeout")
	})

	t.Run("inspector cli", func(t *testing.T) {
		raw, err := runClient(t, nil, "npx", "--no-install", "mcp-inspector", "--cli", url, "--transport", "http", "--method", "tools/list")
		if err != nil {
			t.Fatalf("mcp-inspector: %v", err)
		}
		var listed struct {
			Tools []struct {
				Name        string         `json:"name"`
				InputSchema map[string]any `json:"inputSchema"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(raw, &listed); err != nil {
			t.Fatalf("mcp-inspector printed %s: %v", raw, err)
		}
		var names []string
		for _, tl := range listed.Tools {
			names = append(names, tl.Name)
			if tl.InputSchema["type"] != "object" {
				t.Errorf("%s: input schema %v", tl.Name, tl.InputSchema)
			}
		}
		if want := mcpToolNames; !slices.Equal(names, want) {
			t.Errorf("inspector listed %q, want %q", names, want)
		}
	})

	t.Run("ai sdk tool loop", func(t *testing.T) {
		var out struct {
			Steps           int      `json:"steps"`
			Text            string   `json:"text"`
			Calls           int      `json:"calls"`
			ToolsSeen       []string `json:"toolsSeen"`
			RunCodeRequired []string `json:"runCodeRequired"`
			ToolResult      struct {
				ToolName string `json:"toolName"`
				Output   struct {
					Type  string `json:"type"`
					Value []struct {
						Type string `json:"type"`
						Text string `json:"text"`
					} `json:"value"`
				} `json:"output"`
			} `json:"toolResult"`
		}
		node(t, &out, "ai_sdk_loop.mjs", url)
		if out.Steps != 2 || out.Calls != 2 || out.Text != "done" {
			t.Errorf("loop: %d steps, %d model calls, text %q; want 2, 2, done", out.Steps, out.Calls, out.Text)
		}
		if want := mcpToolNames; !slices.Equal(out.ToolsSeen, want) {
			t.Errorf("the model saw tools %q, want %q", out.ToolsSeen, want)
		}
		if !slices.Equal(out.RunCodeRequired, []string{"language", "code"}) {
			t.Errorf("the model saw run_code requiring %q", out.RunCodeRequired)
		}
		// The program ran in gVisor (its kernel calls itself Linux) and its
		// output reached the model's next step.
		r := out.ToolResult
		if r.ToolName != "run_code" || r.Output.Type != "content" || len(r.Output.Value) != 1 || r.Output.Value[0].Text != "45 Linux\n" {
			t.Errorf("the model's second step got %+v, want run_code's output 45 Linux", r)
		}
	})
}

// mcpToken mints a token for tenant with the server's secret.
func mcpToken(t *testing.T, secretFile, tenant string) string {
	t.Helper()
	var out bytes.Buffer
	if err := tokenCmd([]string{"--subject=" + tenant, "--scopes=run,sessions", "--jwt-hs256-secret-file=" + secretFile}, &out); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out.String())
}

// The MCP door with auth on: no token is 401 for the real client, a
// token's tenant owns what its MCP session opens (one core: /v1 sees it
// for the same tenant only), and `paddock mcp` bridges stdio to /mcp.
func TestE2EMCPAuth(t *testing.T) {
	clearAuthEnv(t)
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("an-mcp-e2e-secret-of-at-least-32-bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newE2EWith(t, "--jwt-hs256-secret-file="+secret)
	url := e.srv.URL + "/mcp"
	alice, bob := mcpToken(t, secret, "alice"), mcpToken(t, secret, "bob")

	t.Run("no token is 401", func(t *testing.T) {
		var out struct {
			Connected bool   `json:"connected"`
			Code      int    `json:"code"`
			Message   string `json:"message"`
		}
		node(t, &out, "mcp_client.mjs", "noauth", url)
		if out.Connected || out.Code != http.StatusUnauthorized || !strings.Contains(out.Message, "missing bearer token") {
			t.Fatalf("without a token: %+v, want refused with 401", out)
		}
	})

	t.Run("typescript sdk over http with a token", func(t *testing.T) {
		var out mcpClientOut
		node(t, &out, "mcp_client.mjs", "http", url, alice)
		checkMCPClient(t, e, out)
	})

	t.Run("typescript sdk over stdio through paddock mcp", func(t *testing.T) {
		var out mcpClientOut
		node(t, &out, "mcp_client.mjs", "stdio", serverBinary(t), url, alice)
		checkMCPClient(t, e, out)
	})

	t.Run("tool schemas on /v1/tools", func(t *testing.T) {
		get := func(token string) (int, map[string]any) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, e.srv.URL+"/v1/tools?format=anthropic", nil)
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body map[string]any
			_ = json.NewDecoder(resp.Body).Decode(&body)
			return resp.StatusCode, body
		}
		if code, body := get(""); code != http.StatusUnauthorized || body["code"] != "invalid_token" {
			t.Errorf("without a token: HTTP %d %v, want 401 invalid_token", code, body)
		}
		code, body := get(alice)
		tools, _ := body["tools"].([]any)
		if code != http.StatusOK || body["format"] != "anthropic" || len(tools) != len(mcpToolNames) {
			t.Fatalf("with a token: HTTP %d %v", code, body)
		}
		first, _ := tools[0].(map[string]any)
		schema, _ := json.Marshal(first["input_schema"])
		if first["name"] != "run_code" || !strings.Contains(string(schema), `"enum":["node","python"]`) {
			t.Errorf("first tool %s %s", first["name"], schema)
		}
	})

	t.Run("a session belongs to the token's tenant", func(t *testing.T) {
		c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
		cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url,
			HTTPClient: &http.Client{Transport: bearerTransport(alice)}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "create_session", Arguments: map[string]any{"language": "python"}})
		if err != nil || res.IsError {
			t.Fatalf("create_session: %v %+v", err, res)
		}
		id := res.StructuredContent.(map[string]any)["session_id"].(string)
		if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "execute", Arguments: map[string]any{"session_id": id, "code": "x = 7"}}); err != nil {
			t.Fatal(err)
		}
		execute := func(token string) (int, string) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.srv.URL+"/v1/sessions/"+id+"/execute", strings.NewReader(`{"code":"x * 6"}`))
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body struct {
				Code string `json:"code"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&body)
			return resp.StatusCode, body.Code
		}
		if code, _ := execute(alice); code != http.StatusOK {
			t.Errorf("alice on /v1 in her MCP-opened session: HTTP %d, want 200", code)
		}
		if code, ec := execute(bob); code != http.StatusNotFound || ec != "session_not_found" {
			t.Errorf("bob on /v1 in alice's session: HTTP %d %s, want 404 session_not_found", code, ec)
		}
		if err := cs.Close(); err != nil {
			t.Fatal(err)
		}
		awaitNoSessions(t, e)
	})
}

// bearerTransport sends token with every request.
func bearerTransport(token string) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+token)
		return http.DefaultTransport.RoundTrip(r)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
