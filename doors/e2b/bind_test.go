package e2bdoor

import (
	"testing"
)

// H45: a guessed sandbox id, a wrong token or another sandbox's token
// gets the same answer as an unknown sandbox.
func TestInSandboxCallsAreBoundToTheirTokens(t *testing.T) {
	td := newTestDoor(t, Config{})
	alice := td.create("alice", nil)
	bob := td.create("bob", nil)
	bobCharged := td.core.admitted["bob"]
	const notFound = `{"code":404,"message":"sandbox \"s01\" not found"}`
	for _, tc := range []struct {
		name    string
		method  string
		path    string
		headers map[string]string
		code    int
		body    string
	}{
		{"right envd token", "GET", "/health", envd(alice), 204, ""},
		{"no token", "GET", "/health", with(envd(alice), "X-Access-Token", ""), 401,
			`{"code":401,"message":"missing access token: send the envdAccessToken (X-Access-Token) or trafficAccessToken (E2B-Traffic-Access-Token) of the create answer"}`},
		{"wrong token", "GET", "/health", with(envd(alice), "X-Access-Token", "guess"), 404, notFound},
		{"bob's token on alice's id", "GET", "/health", with(envd(alice), "X-Access-Token", bob.EnvdAccessToken), 404, notFound},
		{"traffic token on envd", "GET", "/health", with(envd(alice), "X-Access-Token", alice.TrafficAccessToken), 404, notFound},
		{"unknown id", "GET", "/health", with(envd(alice), "E2b-Sandbox-Id", "s99"), 404, `{"code":404,"message":"sandbox \"s99\" not found"}`},
		{"no sandbox header", "GET", "/health", with(envd(alice), "E2b-Sandbox-Id", ""), 404,
			`{"code":404,"message":"no route /health: in-sandbox calls carry the E2b-Sandbox-Id header (set E2B_SANDBOX_URL to this server)"}`},
		{"wrong port", "GET", "/health", with(envd(alice), "E2b-Sandbox-Port", "8080"), 404, `{"code":404,"message":"no route /health on sandbox port 8080"}`},
		{"contexts with traffic token", "GET", "/contexts", interp(alice), 200, `[{"id":"s01","language":"python","cwd":"/home/user"}]`},
		{"contexts with envd token", "GET", "/contexts", with(with(interp(alice), "E2B-Traffic-Access-Token", ""), "X-Access-Token", alice.EnvdAccessToken), 200,
			`[{"id":"s01","language":"python","cwd":"/home/user"}]`},
		{"contexts with bob's traffic token", "GET", "/contexts", with(interp(alice), "E2B-Traffic-Access-Token", bob.TrafficAccessToken), 404, notFound},
		{"execute with a wrong token", "POST", "/execute", with(interp(alice), "E2B-Traffic-Access-Token", "x"), 404, notFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := td.do(tc.method, tc.path, nil, tc.headers)
			if a.code != tc.code || string(a.body) != tc.body {
				t.Fatalf("HTTP %d %s, want %d %s", a.code, a.body, tc.code, tc.body)
			}
		})
	}
	if td.core.admitted["bob"] != bobCharged {
		t.Fatalf("bob charged %d in-sandbox requests for alice's sandbox", td.core.admitted["bob"]-bobCharged)
	}
}

func TestInSandboxCallsEndWithTheSandbox(t *testing.T) {
	td := newTestDoor(t, Config{})
	sa := td.create("alice", nil)
	if a := td.do("DELETE", "/sandboxes/"+sa.SandboxID, nil, key("alice")); a.code != 204 {
		t.Fatalf("kill: HTTP %d", a.code)
	}
	a := td.do("POST", "/execute", map[string]any{"code": "1"}, interp(sa))
	if a.code != 404 || string(a.body) != `{"code":404,"message":"sandbox \"s01\" not found"}` {
		t.Fatalf("execute after kill: HTTP %d %s", a.code, a.body)
	}
}
