package gateway

import (
	"net/http/httptest"
	"testing"
)

func TestTag(t *testing.T) {
	// As `echo -n paddock-node:n1 | sha256sum` begins.
	for name, want := range map[string]string{"n1": "d5529766", "n2": "8fd3b076"} {
		if got := Tag(name); got != want {
			t.Errorf("Tag(%q) = %s, want %s", name, got, want)
		}
	}
}

func TestParseStatic(t *testing.T) {
	tests := []struct {
		in    string
		names []string
		bad   bool
	}{
		{in: "b=http://127.0.0.1:2, a=http://127.0.0.1:1", names: []string{"a", "b"}},
		{in: "a=http://127.0.0.1:1/", names: []string{"a"}},
		{in: "", bad: true},
		{in: "a", bad: true},
		{in: "A=http://x:1", bad: true},
		{in: "ip-10-0-0-7.ec2.internal=http://x:1", names: []string{"ip-10-0-0-7.ec2.internal"}},
		{in: "a..b=http://x:1", bad: true},
		{in: "a.-b=http://x:1", bad: true},
		{in: "a=ftp://x:1", bad: true},
		{in: "a=http://x:1/path", bad: true},
		{in: "a=http://x:1,a=http://y:1", bad: true},
	}
	for _, tt := range tests {
		s, err := ParseStatic(tt.in)
		if (err != nil) != tt.bad {
			t.Errorf("ParseStatic(%q): %v", tt.in, err)
			continue
		}
		for i, n := range tt.names {
			if s[i].Name != n {
				t.Errorf("ParseStatic(%q)[%d] = %s, want %s", tt.in, i, s[i].Name, n)
			}
		}
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		method, path string
		sandbox      string
		route        route
		id           string
	}{
		{"POST", "/v1/run", "", routePlace, ""},
		{"POST", "/v1/sessions", "", routePlace, ""},
		{"GET", "/v1/sessions", "", routeAll, ""},
		{"POST", "/v1/sessions/abc/execute", "", routeID, "abc"},
		{"GET", "/api/kernels", "", routeAll, ""},
		{"GET", "/api/kernels/1234abcd-0000-0000-0000-000000000000/channels", "", routeID, "1234abcd-0000-0000-0000-000000000000"},
		{"POST", "/api/sessions", "", routePlace, ""},
		{"PATCH", "/api/sessions/x", "", routeID, "x"},
		{"POST", "/sandboxes", "", routePlace, ""},
		{"POST", "/v2/sandboxes/s1/connect", "", routeID, "s1"},
		{"DELETE", "/sandboxes/s1", "", routeID, "s1"},
		{"POST", "/execute", "s9", routeID, "s9"},
		{"GET", "/v1/templates", "", routeAny, ""},
		{"GET", "/v1/admin/sessions", "", routeAll, ""},
		{"GET", "/metrics", "", routeMetrics, ""},
		{"POST", "/v1/graphql", "", routeGraphQL, ""},
		{"POST", "/mcp", "", routeMCP, ""},
		{"GET", "/readyz", "", routeSelf, ""},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(tt.method, tt.path, nil)
		if tt.sandbox != "" {
			r.Header.Set("E2b-Sandbox-Id", tt.sandbox)
		}
		rt, id := classify(r)
		if rt != tt.route || id != tt.id {
			t.Errorf("%s %s: %v %q, want %v %q", tt.method, tt.path, rt, id, tt.route, tt.id)
		}
	}
	for id, want := range map[string]string{"1234abcd-0000-0000-0000-000000000000": "1234abcd", "1234abcd00000000": "1234abcd", "xyz": "", "1234abcg0000": ""} {
		if got := tagOf(id); got != want {
			t.Errorf("tagOf(%q) = %q, want %q", id, got, want)
		}
	}
}
