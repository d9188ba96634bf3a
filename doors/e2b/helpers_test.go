package e2bdoor

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
)

type testDoor struct {
	t    testing.TB
	r    *gin.Engine
	core *fakeCore
}

func newTestDoor(t testing.TB, cfg Config) *testDoor {
	t.Helper()
	gin.SetMode(gin.ReleaseMode)
	fc := newFakeCore()
	cfg.Core = fc
	td := &testDoor{t: t, r: gin.New(), core: fc}
	Mount(cfg)(td.r)
	return td
}

type answer struct {
	code   int
	header http.Header
	body   []byte
}

func (a answer) json(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(a.body, v); err != nil {
		t.Fatalf("decoding %s: %v", a.body, err)
	}
}

// do sends a request; body is JSON-encoded unless it is []byte.
func (td *testDoor) do(method, path string, body any, headers map[string]string) answer {
	td.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(method, path, rd)
	req.RemoteAddr = "192.0.2.1:1234"
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	td.r.ServeHTTP(w, req)
	return answer{code: w.Code, header: w.Header(), body: w.Body.Bytes()}
}

func key(k string) map[string]string { return map[string]string{"X-API-KEY": k} }

// create makes a sandbox for tenant with body.
func (td *testDoor) create(tenant string, body map[string]any) sandboxAnswer {
	td.t.Helper()
	a := td.do("POST", "/v2/sandboxes", body, key(tenant))
	if a.code != http.StatusCreated {
		td.t.Fatalf("create: HTTP %d %s", a.code, a.body)
	}
	var sa sandboxAnswer
	a.json(td.t, &sa)
	return sa
}

// envd is the headers of an envd call on sa.
func envd(sa sandboxAnswer) map[string]string {
	return map[string]string{"E2b-Sandbox-Id": sa.SandboxID, "E2b-Sandbox-Port": PortEnvd, "X-Access-Token": sa.EnvdAccessToken}
}

// interp is the headers of a code-interpreter call on sa.
func interp(sa sandboxAnswer) map[string]string {
	return map[string]string{"E2b-Sandbox-Id": sa.SandboxID, "E2b-Sandbox-Port": PortInterpreter,
		"E2B-Traffic-Access-Token": sa.TrafficAccessToken, "Content-Type": "application/json"}
}

func with(h map[string]string, k, v string) map[string]string {
	out := map[string]string{}
	for a, b := range h {
		out[a] = b
	}
	out[k] = v
	return out
}
