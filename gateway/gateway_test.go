package gateway

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeNode is a node's HTTP face: /readyz with its ready count, and a
// handler per test for everything else, behind the credential check.
type fakeNode struct {
	name  string
	srv   *httptest.Server
	mu    sync.Mutex
	ready int
	hits  []string // method path body, of signed requests
	serve http.HandlerFunc
}

func newFakeNode(t *testing.T, name string, ready int, serve http.HandlerFunc) *fakeNode {
	t.Helper()
	cred, _ := NewCredential([]byte(testSecret), nil)
	n := &fakeNode{name: name, ready: ready, serve: serve}
	n.srv = httptest.NewServer(RequireCredential(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" {
			n.mu.Lock()
			defer n.mu.Unlock()
			fmt.Fprintf(w, `{"status":"ready","templates":[{"name":"python","ready":%d}]}`, n.ready)
			return
		}
		b, _ := io.ReadAll(r.Body)
		n.mu.Lock()
		n.hits = append(n.hits, r.Method+" "+r.URL.Path+" "+string(b))
		n.mu.Unlock()
		n.serve(w, r)
	}), cred))
	t.Cleanup(n.srv.Close)
	return n
}

func (n *fakeNode) hitList() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.hits...)
}

func newTestGateway(t *testing.T, nodes ...*fakeNode) *httptest.Server {
	t.Helper()
	var set Static
	for _, n := range nodes {
		set = append(set, Node{Name: n.name, URL: n.srv.URL})
	}
	cred, _ := NewCredential([]byte(testSecret), nil)
	g, err := New(Config{Source: set, Credential: cred})
	if err != nil {
		t.Fatal(err)
	}
	g.Start(t.Context())
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	return srv
}

func ok(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"node":%q}`, name)
	}
}

func send(t *testing.T, method, url, body string, header ...string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

const runBody = `{"language":"python","code":"print(1)"}`

func TestPlaceByReadyCapacity(t *testing.T) {
	a := newFakeNode(t, "a", 1, ok("a"))
	b := newFakeNode(t, "b", 3, ok("b"))
	gw := newTestGateway(t, a, b)
	status, h, body := send(t, "POST", gw.URL+"/v1/run", runBody)
	if status != 200 || h.Get("X-Paddock-Node") != "b" || body != `{"node":"b"}` {
		t.Fatalf("%d %s %s, want b's answer", status, h.Get("X-Paddock-Node"), body)
	}
	if got := b.hitList(); len(got) != 1 || got[0] != "POST /v1/run "+runBody {
		t.Errorf("b saw %q", got)
	}
}

func TestRetryOnlyBeforeStart(t *testing.T) {
	tests := []struct {
		name      string
		first     http.HandlerFunc
		status    int
		code      string
		secondHit bool
	}{
		{name: "saturated goes on", first: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(503)
			fmt.Fprint(w, `{"code":"saturated","message":"no sandbox"}`)
		}, status: 200, secondHit: true},
		{name: "429 goes on", first: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(429)
			fmt.Fprint(w, `{"code":"too_many_runs"}`)
		}, status: 200, secondHit: true},
		{name: "500 stays", first: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(500)
			fmt.Fprint(w, `{"code":"internal"}`)
		}, status: 500, code: "internal"},
		{name: "503 of another kind stays", first: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(503)
			fmt.Fprint(w, `{"code":"other"}`)
		}, status: 503, code: "other"},
		{name: "a node failing mid-run is not retried", first: func(w http.ResponseWriter, r *http.Request) {
			c, _, _ := w.(http.Hijacker).Hijack()
			c.Close()
		}, status: 502, code: "node_lost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newFakeNode(t, "a", 5, tt.first)
			b := newFakeNode(t, "b", 1, ok("b"))
			gw := newTestGateway(t, a, b)
			status, _, body := send(t, "POST", gw.URL+"/v1/run", runBody)
			if status != tt.status || (tt.code != "" && !strings.Contains(body, `"code":"`+tt.code+`"`)) {
				t.Fatalf("%d %s, want %d %s", status, body, tt.status, tt.code)
			}
			if got := len(b.hitList()); (got == 1) != tt.secondHit {
				t.Errorf("b saw %d requests", got)
			}
			if tt.secondHit && b.hitList()[0] != "POST /v1/run "+runBody {
				t.Errorf("b saw %q, not the whole body", b.hitList())
			}
		})
	}
}

func TestNodeDown(t *testing.T) {
	a := newFakeNode(t, "a", 5, ok("a"))
	b := newFakeNode(t, "b", 1, ok("b"))
	gw := newTestGateway(t, a, b)
	a.srv.Close() // connection refused from now on
	status, h, _ := send(t, "POST", gw.URL+"/v1/run", runBody)
	if status != 200 || h.Get("X-Paddock-Node") != "b" {
		t.Fatalf("run: %d on %q, want 200 on b", status, h.Get("X-Paddock-Node"))
	}
	id := Tag("a") + strings.Repeat("0", 24)
	status, _, body := send(t, "POST", gw.URL+"/v1/sessions/"+id+"/execute", `{"code":"1"}`)
	if status != 503 || !strings.Contains(body, "node_unavailable") || !strings.Contains(body, "node a") {
		t.Fatalf("session on a: %d %s", status, body)
	}
	status, _, body = send(t, "GET", gw.URL+"/v1/sessions/"+strings.Repeat("f", 32), "")
	if status != 404 || !strings.Contains(body, "no node of this tier") {
		t.Fatalf("unknown tag: %d %s", status, body)
	}
}

func TestIDsGoToTheirNode(t *testing.T) {
	a := newFakeNode(t, "a", 5, ok("a"))
	b := newFakeNode(t, "b", 1, ok("b"))
	gw := newTestGateway(t, a, b)
	hex := Tag("b") + strings.Repeat("1", 24)
	uuid := hex[:8] + "-" + hex[8:12] + "-" + hex[12:16] + "-" + hex[16:20] + "-" + hex[20:]
	for _, path := range []string{"/v1/sessions/" + hex + "/execute", "/api/kernels/" + uuid, "/sandboxes/" + hex} {
		if _, h, _ := send(t, "POST", gw.URL+path, "{}"); h.Get("X-Paddock-Node") != "b" {
			t.Errorf("%s went to %q, want b", path, h.Get("X-Paddock-Node"))
		}
	}
	if _, h, _ := send(t, "POST", gw.URL+"/execute", "{}", "E2b-Sandbox-Id", hex); h.Get("X-Paddock-Node") != "b" {
		t.Errorf("in-sandbox call went to %q, want b", h.Get("X-Paddock-Node"))
	}
	if _, h, _ := send(t, "POST", gw.URL+"/api/sessions", `{"kernel":{"id":"`+uuid+`"}}`); h.Get("X-Paddock-Node") != "b" {
		t.Errorf("a Jupyter session on b's kernel went to %q", h.Get("X-Paddock-Node"))
	}
}

func TestIdempotencyKeyHoldsItsNode(t *testing.T) {
	nodes := []*fakeNode{newFakeNode(t, "a", 1, ok("a")), newFakeNode(t, "b", 1, ok("b")), newFakeNode(t, "c", 1, ok("c"))}
	gw := newTestGateway(t, nodes...)
	for _, key := range []string{"k1", "k2", "k3", "k4"} {
		var first string
		for range 3 {
			_, h, _ := send(t, "POST", gw.URL+"/v1/run", runBody, "Idempotency-Key", key)
			if first == "" {
				first = h.Get("X-Paddock-Node")
			}
			if got := h.Get("X-Paddock-Node"); got != first || got == "" {
				t.Fatalf("key %s went to %q after %q", key, got, first)
			}
		}
	}
}

func TestMCPSessionHeader(t *testing.T) {
	a := newFakeNode(t, "a", 5, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(mcpSessionHeader) == "" {
			w.Header().Set(mcpSessionHeader, "s-42")
		}
		fmt.Fprintf(w, "saw %q", r.Header.Get(mcpSessionHeader))
	})
	b := newFakeNode(t, "b", 1, ok("b"))
	gw := newTestGateway(t, a, b)
	_, h, _ := send(t, "POST", gw.URL+"/mcp", `{"method":"initialize"}`)
	if got := h.Get(mcpSessionHeader); got != Tag("a")+".s-42" {
		t.Fatalf("Mcp-Session-Id %q, want %s.s-42", got, Tag("a"))
	}
	if _, _, body := send(t, "POST", gw.URL+"/mcp", `{}`, mcpSessionHeader, Tag("a")+".s-42"); body != `saw "s-42"` {
		t.Errorf("node a %s", body)
	}
	if status, _, _ := send(t, "POST", gw.URL+"/mcp", `{}`, mcpSessionHeader, "zz.s-42"); status != 404 {
		t.Errorf("unknown node: %d", status)
	}
}

func TestListsAndMetricsMerge(t *testing.T) {
	node := func(name string) *fakeNode {
		return newFakeNode(t, name, 1, func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/metrics":
				fmt.Fprint(w, "# HELP paddock_runs_total Runs.\n# TYPE paddock_runs_total counter\npaddock_runs_total 3\n")
			default:
				fmt.Fprintf(w, `{"sessions":[{"id":"%s-1"}],"next":null}`, name)
			}
		})
	}
	gw := newTestGateway(t, node("a"), node("b"))
	_, _, body := send(t, "GET", gw.URL+"/v1/sessions", "")
	var got struct {
		Sessions []struct{ ID string } `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil || len(got.Sessions) != 2 || got.Sessions[0].ID != "a-1" || got.Sessions[1].ID != "b-1" {
		t.Errorf("merged list %s", body)
	}
	_, _, body = send(t, "GET", gw.URL+"/metrics", "")
	for _, want := range []string{`paddock_runs_total{node="a"} 3`, `paddock_runs_total{node="b"} 3`} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s:\n%s", want, body)
		}
	}
	if strings.Count(body, "# TYPE paddock_runs_total") != 1 {
		t.Errorf("one family per name:\n%s", body)
	}
}

// Between two checks, runs placed one after another spread: each takes
// one of the ready sandboxes the last check saw.
func TestPlacementsBetweenChecksSpread(t *testing.T) {
	a := newFakeNode(t, "a", 1, ok("a"))
	b := newFakeNode(t, "b", 1, ok("b"))
	c := newFakeNode(t, "c", 2, ok("c"))
	var set Static
	for _, n := range []*fakeNode{a, b, c} {
		set = append(set, Node{Name: n.name, URL: n.srv.URL})
	}
	cred, _ := NewCredential([]byte(testSecret), nil)
	g, err := New(Config{Source: set, Credential: cred, CheckEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	g.Start(t.Context())
	gw := httptest.NewServer(g)
	t.Cleanup(gw.Close)
	var got []string
	for range 5 {
		_, h, _ := send(t, "POST", gw.URL+"/v1/run", runBody)
		got = append(got, h.Get("X-Paddock-Node"))
	}
	if want := "c a b c a"; strings.Join(got, " ") != want {
		t.Errorf("placed on %v, want %s", got, want)
	}
}

// A bad or missing token is never placed or fanned out: one node, the
// first up by name, refuses it (and counts the failure).
func TestRefusedCallersGoToOneNode(t *testing.T) {
	refuse := func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer good" {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"code":"invalid_token"}`)
			return
		}
		fmt.Fprint(w, `{"sessions":[]}`)
	}
	a := newFakeNode(t, "a", 0, refuse)
	b := newFakeNode(t, "b", 5, refuse)
	cred, _ := NewCredential([]byte(testSecret), nil)
	g, err := New(Config{Source: Static{{Name: "a", URL: a.srv.URL}, {Name: "b", URL: b.srv.URL}}, Credential: cred,
		Authenticate: func(r *http.Request) (string, bool, error) {
			switch r.Header.Get("Authorization") {
			case "":
				return "", false, nil
			case "Bearer good":
				return "alice", true, nil
			}
			return "", true, fmt.Errorf("bad token")
		}})
	if err != nil {
		t.Fatal(err)
	}
	g.Start(t.Context())
	gw := httptest.NewServer(g)
	t.Cleanup(gw.Close)
	for _, tc := range []struct{ method, path, auth string }{
		{"POST", "/v1/run", "Bearer forged"},
		{"POST", "/v1/run", ""},
		{"GET", "/v1/sessions", ""},
	} {
		status, h, _ := send(t, tc.method, gw.URL+tc.path, runBody, "Authorization", tc.auth)
		if status != http.StatusUnauthorized || h.Get("X-Paddock-Node") != "a" {
			t.Errorf("%s %s with %q: %d from %q, want 401 from a", tc.method, tc.path, tc.auth, status, h.Get("X-Paddock-Node"))
		}
	}
	if got := len(b.hitList()); got != 0 {
		t.Errorf("b saw %d refused callers", got)
	}
	if status, h, _ := send(t, "POST", gw.URL+"/v1/run", runBody, "Authorization", "Bearer good"); status != 200 || h.Get("X-Paddock-Node") != "b" {
		t.Errorf("a good token: %d from %q, want 200 placed on b", status, h.Get("X-Paddock-Node"))
	}
}

// A draining node's refusal sends the run on and takes the node out at
// once: the next run does not try it, and its sessions are unavailable.
func TestDrainingNode(t *testing.T) {
	a := newFakeNode(t, "a", 5, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(HeaderDraining, "true")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(503)
		fmt.Fprint(w, `{"code":"draining","message":"shutting down"}`)
	})
	b := newFakeNode(t, "b", 1, ok("b"))
	gw := newTestGateway(t, a, b)
	for i := range 2 {
		status, h, _ := send(t, "POST", gw.URL+"/v1/run", runBody)
		if status != 200 || h.Get("X-Paddock-Node") != "b" {
			t.Fatalf("run %d: %d on %q, want 200 on b", i, status, h.Get("X-Paddock-Node"))
		}
	}
	if got := len(a.hitList()); got != 1 {
		t.Errorf("the draining node saw %d requests, want only the first run", got)
	}
	id := Tag("a") + strings.Repeat("0", 24)
	if status, _, body := send(t, "POST", gw.URL+"/v1/sessions/"+id+"/execute", `{"code":"1"}`); status != 503 || !strings.Contains(body, "node_unavailable") {
		t.Fatalf("session on the draining node: %d %s", status, body)
	}
}
