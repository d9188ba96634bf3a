package e2bdoor

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/core"
)

func TestCreateAnswersTokensAndVersion(t *testing.T) {
	td := newTestDoor(t, Config{})
	a := td.do("POST", "/v2/sandboxes", map[string]any{"templateID": "code-interpreter-v1", "timeout": 60,
		"metadata": map[string]string{"team": "a"}}, key("alice"))
	if a.code != http.StatusCreated {
		t.Fatalf("HTTP %d %s", a.code, a.body)
	}
	var sa sandboxAnswer
	a.json(t, &sa)
	if sa.SandboxID != "s01" || sa.TemplateID != "code-interpreter-v1" || sa.Alias != "python" ||
		sa.EnvdVersion != "0.5.7" || sa.ClientID != "paddock" || len(sa.EnvdAccessToken) != 64 ||
		len(sa.TrafficAccessToken) != 64 || sa.EnvdAccessToken == sa.TrafficAccessToken {
		t.Fatalf("answer %+v", sa)
	}
	if got := td.core.sessions["s01"].info; got.Owner != "alice" || got.TTL.Seconds() != 60 || got.Template != "python" {
		t.Fatalf("session %+v", got)
	}
}

func TestCreateTemplates(t *testing.T) {
	for _, tc := range []struct{ template, language, want string }{
		{"", "python", "python"}, {"base", "python", "python"}, {"code-interpreter-v1", "python", "python"},
		{"node", "node", "node"}, {"python", "python", "python"}, {"python-slim", "python", "python-slim"},
	} {
		t.Run(tc.template, func(t *testing.T) {
			td := newTestDoor(t, Config{})
			td.create("alice", map[string]any{"templateID": tc.template})
			if s := td.core.sessions["s01"]; s.language != tc.language || s.info.Template != tc.want {
				t.Fatalf("template %q served by %q on %q, want %q on %q", tc.template, s.language, s.info.Template, tc.language, tc.want)
			}
		})
	}
}

func TestCreateRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		key  string
		body any
		code int
		msg  string
	}{
		{"no key", "", map[string]any{}, 401, "invalid token"},
		{"unknown template", "alice", map[string]any{"templateID": "r-lang"}, 400, `unknown language or template "r-lang" (have: node, python)`},
		{"timeout zero", "alice", map[string]any{"timeout": 0}, 400, "timeout must be between 1 and 2147483 seconds, got 0"},
		{"timeout past the core's", "alice", map[string]any{"timeout": 7200}, 400, "ttl_s must be at most 3600"},
		{"network rules", "alice", map[string]any{"network": map[string]any{"rules": map[string]any{"a.test": []any{}}}}, 400, "network.rules: Paddock's operator attaches headers to hosts (--egress-secrets); a sandbox cannot"},
		{"network address", "alice", map[string]any{"network": map[string]any{"allowOut": []string{"8.8.8.8"}}}, 400, `network.allowOut: "8.8.8.8" is an address; Paddock's egress allows host names only (and refuses raw addresses)`},
		{"mcp", "alice", map[string]any{"mcp": map[string]any{"x": 1}}, 400, "mcp: Paddock sandboxes run no MCP gateway"},
		{"auto pause without memory", "alice", map[string]any{"autoPause": true, "autoPauseMemory": false}, 400, "autoPauseMemory: false (onTimeout keepMemory false) is not served: Paddock pauses a sandbox with its memory"},
		{"too much metadata", "alice", map[string]any{"metadata": manyKeys(65)}, 400, "metadata: at most 64 entries, got 65"},
		{"env key the core refuses", "alice", map[string]any{"envVars": map[string]string{"A=B": "1"}}, 400,
			`env key "A=B" must not contain '='`},
		{"not json", "alice", []byte("{"), 400, "request body is not valid JSON: unexpected EOF"},
		{"body too large", "alice", []byte(`{"metadata":{"a":"` + strings.Repeat("x", 1<<20) + `"}}`), 413, "request body over 1048576 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			td := newTestDoor(t, Config{})
			a := td.do("POST", "/sandboxes", tc.body, key(tc.key))
			var e apiError
			a.json(t, &e)
			if a.code != tc.code || e.Code != tc.code || e.Message != tc.msg {
				t.Fatalf("HTTP %d %s, want %d %q", a.code, a.body, tc.code, tc.msg)
			}
			if ids := td.core.live(); len(ids) != 0 {
				t.Fatalf("sessions left: %v", ids)
			}
		})
	}
}

// The sandbox's envVars are the core's to check (a door checks no
// ranges): the door hands them on as they came.
func TestCreateEnvVarsReachTheCore(t *testing.T) {
	td := newTestDoor(t, Config{})
	env := manyKeys(300)
	env["LONG"] = strings.Repeat("x", 5000)
	td.create("alice", map[string]any{"envVars": env})
	if got := td.core.sessions["s01"].env; len(got) != 301 || got["LONG"] != env["LONG"] {
		t.Fatalf("the core got %d env entries, want 301", len(got))
	}
}

func manyKeys(n int) map[string]string {
	m := map[string]string{}
	for i := range n {
		m[strings.Repeat("k", i+1)] = "v"
	}
	return m
}

func TestGetKillAndOtherTenants(t *testing.T) {
	td := newTestDoor(t, Config{})
	sa := td.create("alice", map[string]any{"metadata": map[string]string{"team": "a"}})
	var d sandboxDetail
	a := td.do("GET", "/sandboxes/"+sa.SandboxID, nil, key("alice"))
	a.json(t, &d)
	if a.code != 200 || d.SandboxID != "s01" || d.State != "running" || d.Metadata["team"] != "a" || d.EnvdVersion != "0.5.7" {
		t.Fatalf("get: HTTP %d %s", a.code, a.body)
	}
	for _, tc := range []struct{ method, path string }{
		{"GET", "/sandboxes/s01"}, {"DELETE", "/sandboxes/s01"}, {"POST", "/sandboxes/s01/timeout"},
		{"POST", "/v2/sandboxes/s01/connect"},
	} {
		a := td.do(tc.method, tc.path, map[string]any{"timeout": 30}, key("bob"))
		if a.code != 404 || string(a.body) != `{"code":404,"message":"sandbox \"s01\" not found"}` {
			t.Fatalf("bob %s %s: HTTP %d %s", tc.method, tc.path, a.code, a.body)
		}
	}
	if a := td.do("DELETE", "/sandboxes/s01", nil, key("alice")); a.code != 204 {
		t.Fatalf("kill: HTTP %d %s", a.code, a.body)
	}
	if ids := td.core.live(); len(ids) != 0 {
		t.Fatalf("sessions left after kill: %v", ids)
	}
	a = td.do("DELETE", "/sandboxes/s01", nil, key("alice"))
	if a.code != 404 || string(a.body) != `{"code":404,"message":"sandbox \"s01\" not found"}` {
		t.Fatalf("second kill: HTTP %d %s", a.code, a.body)
	}
}

// A context whose session opens while its sandbox is killed is closed,
// not left running (and counted against the tenant) until its timeout.
func TestKillDuringContextCreate(t *testing.T) {
	td := newTestDoor(t, Config{})
	sa := td.create("alice", nil)
	td.core.BeforeCreate = func() {
		td.core.BeforeCreate = nil
		if a := td.do("DELETE", "/sandboxes/"+sa.SandboxID, nil, key("alice")); a.code != 204 {
			t.Errorf("kill: HTTP %d %s", a.code, a.body)
		}
	}
	a := td.do("POST", "/contexts", map[string]any{"language": "js"}, interp(sa))
	if a.code != 404 || string(a.body) != `{"code":404,"message":"sandbox \"s01\" not found"}` {
		t.Errorf("create context: HTTP %d %s", a.code, a.body)
	}
	if ids := td.core.live(); len(ids) != 0 {
		t.Fatalf("sessions left after kill: %v", ids)
	}
}

// The core decides who may reach a sandbox: a token of the same tenant
// without the sessions scope is refused as the core refuses it, and its
// list is empty, as GET /v1/sessions is.
func TestControlPlaneAsksTheCore(t *testing.T) {
	td := newTestDoor(t, Config{})
	td.create("alice", nil)
	for _, tc := range []struct{ method, path string }{
		{"GET", "/sandboxes/s01"}, {"DELETE", "/sandboxes/s01"}, {"POST", "/sandboxes/s01/timeout"},
		{"POST", "/v2/sandboxes/s01/connect"},
	} {
		a := td.do(tc.method, tc.path, map[string]any{"timeout": 30}, key("alice+run-only"))
		if a.code != 403 || string(a.body) != `{"code":403,"message":"the token lacks the \"sessions\" scope"}` {
			t.Errorf("%s %s without the sessions scope: HTTP %d %s", tc.method, tc.path, a.code, a.body)
		}
	}
	for _, path := range []string{"/sandboxes", "/v2/sandboxes"} {
		if a := td.do("GET", path, nil, key("alice+run-only")); a.code != 200 || string(a.body) != "[]" {
			t.Errorf("GET %s without the sessions scope: HTTP %d %s", path, a.code, a.body)
		}
	}
	if ids := td.core.live(); len(ids) != 1 {
		t.Fatalf("sessions live: %v, want s01", ids)
	}
}

func TestKillClosesEveryContext(t *testing.T) {
	td := newTestDoor(t, Config{})
	sa := td.create("alice", nil)
	a := td.do("POST", "/contexts", map[string]any{"language": "js"}, interp(sa))
	if a.code != 200 || string(a.body) != `{"id":"s02","language":"javascript","cwd":"/home/user"}` {
		t.Fatalf("context: HTTP %d %s", a.code, a.body)
	}
	if a := td.do("DELETE", "/sandboxes/"+sa.SandboxID, nil, key("alice")); a.code != 204 {
		t.Fatalf("kill: HTTP %d %s", a.code, a.body)
	}
	if ids := td.core.live(); len(ids) != 0 {
		t.Fatalf("sessions left after kill: %v", ids)
	}
}

func TestSetTimeout(t *testing.T) {
	td := newTestDoor(t, Config{})
	sa := td.create("alice", nil)
	td.do("POST", "/contexts", map[string]any{"language": "python"}, interp(sa))
	if a := td.do("POST", "/sandboxes/s01/timeout", map[string]any{"timeout": 90}, key("alice")); a.code != 204 {
		t.Fatalf("HTTP %d %s", a.code, a.body)
	}
	for _, id := range []string{"s01", "s02"} {
		if got := td.core.sessions[id].info.TTL.Seconds(); got != 90 {
			t.Fatalf("%s TTL %vs, want 90", id, got)
		}
	}
	a := td.do("POST", "/sandboxes/s01/timeout", map[string]any{"timeout": 7200}, key("alice"))
	if a.code != 400 || string(a.body) != `{"code":400,"message":"ttl_s must be at most 3600"}` {
		t.Fatalf("too long: HTTP %d %s", a.code, a.body)
	}
	if a := td.do("POST", "/sandboxes/s01/timeout", map[string]any{}, key("alice")); a.code != 400 {
		t.Fatalf("no timeout: HTTP %d %s", a.code, a.body)
	}
}

func TestListPages(t *testing.T) {
	td := newTestDoor(t, Config{})
	for range 3 {
		td.create("alice", map[string]any{"metadata": map[string]string{"team": "a"}})
	}
	td.create("alice", map[string]any{"metadata": map[string]string{"team": "b"}})
	td.create("bob", nil)

	var page []sandboxDetail
	a := td.do("GET", "/v2/sandboxes?limit=2&metadata=team%3Da", nil, key("alice"))
	a.json(t, &page)
	if a.code != 200 || len(page) != 2 || page[0].SandboxID != "s01" || page[1].SandboxID != "s02" ||
		a.header.Get("X-Total-Running") != "3" || a.header.Get("X-Next-Token") == "" {
		t.Fatalf("page 1: HTTP %d %v %s", a.code, a.header, a.body)
	}
	a = td.do("GET", "/v2/sandboxes?limit=2&metadata=team%3Da&nextToken="+a.header.Get("X-Next-Token"), nil, key("alice"))
	a.json(t, &page)
	if a.code != 200 || len(page) != 1 || page[0].SandboxID != "s03" || a.header.Get("X-Next-Token") != "" {
		t.Fatalf("page 2: HTTP %d %v %s", a.code, a.header, a.body)
	}
	a = td.do("GET", "/v2/sandboxes?state=paused", nil, key("alice"))
	if a.code != 200 || string(a.body) != "[]" || a.header.Get("X-Total-Running") != "0" {
		t.Fatalf("paused: HTTP %d %s", a.code, a.body)
	}
	a = td.do("GET", "/sandboxes", nil, key("bob"))
	a.json(t, &page)
	if a.code != 200 || len(page) != 1 || page[0].SandboxID != "s05" {
		t.Fatalf("bob v1: HTTP %d %s", a.code, a.body)
	}
	for _, q := range []string{"limit=0", "limit=101", "limit=x", "nextToken=!!!", "state=sleeping"} {
		if a := td.do("GET", "/v2/sandboxes?"+q, nil, key("alice")); a.code != 400 {
			t.Fatalf("%s: HTTP %d %s", q, a.code, a.body)
		}
	}
}

// A sandbox whose main session ended under it (its TTL, or closed
// through /v1) is gone from the door too, and its other contexts closed.
func TestEndedSessionEndsSandbox(t *testing.T) {
	td := newTestDoor(t, Config{})
	sa := td.create("alice", nil)
	td.do("POST", "/contexts", map[string]any{"language": "js"}, interp(sa))
	delete(td.core.sessions, "s01")
	if a := td.do("GET", "/sandboxes/s01", nil, key("alice")); a.code != 404 {
		t.Fatalf("HTTP %d %s", a.code, a.body)
	}
	if ids := td.core.live(); len(ids) != 0 {
		t.Fatalf("sessions left: %v", ids)
	}
}

func TestNotServedAndRateLimit(t *testing.T) {
	td := newTestDoor(t, Config{})
	td.create("alice", nil)
	a := td.do("GET", "/sandboxes/s01/metrics", nil, key("alice"))
	if a.code != 501 || string(a.body) != `{"code":501,"message":"sandbox metrics is not supported by Paddock's E2B door"}` {
		t.Fatalf("metrics: HTTP %d %s", a.code, a.body)
	}
	td.core.AdmitErr = &core429
	a = td.do("GET", "/sandboxes/s01", nil, key("alice"))
	if a.code != 429 || a.header.Get("Retry-After") != "2" {
		t.Fatalf("rate: HTTP %d %v %s", a.code, a.header, a.body)
	}
}

// A saturated server (the core's KindUnavailable with a retry delay) is
// 503 with Retry-After, which the SDKs surface as a SandboxError.
func TestSaturatedIs503WithRetryAfter(t *testing.T) {
	td := newTestDoor(t, Config{})
	td.create("alice", nil)
	td.core.AdmitErr = &core.Error{Kind: core.KindUnavailable, Code: "saturated", RetryAfter: 7 * time.Second,
		Message: "the server is saturated: no sandbox was free within the queue deadline; retry after 7 s"}
	a := td.do("GET", "/sandboxes/s01", nil, key("alice"))
	if a.code != 503 || a.header.Get("Retry-After") != "7" ||
		string(a.body) != `{"code":503,"message":"the server is saturated: no sandbox was free within the queue deadline; retry after 7 s"}` {
		t.Fatalf("HTTP %d %v %s", a.code, a.header, a.body)
	}
}
