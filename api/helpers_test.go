package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/api"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// fixture is an API over a real pool.Manager over the fake runtime.
type fixture struct {
	h    http.Handler
	rt   *runnertest.Runtime
	pool *pool.Manager
}

var testTemplates = []api.Template{
	{
		Name: "python", Language: "python", Description: "Python 3 with numpy",
		Versions: map[string]string{"python": "3.11.2"},
		Limits:   api.Limits{MemoryMB: 512, Processes: 64, CPUs: 1, DiskMB: 64, TimeoutMS: 30000},
	},
	{Name: "node", Language: "node", Description: "Node.js"},
}

// newFixture starts a pool with python (size 1) and node (size 0) unless
// pcfg names templates, and waits until the pool is ready when wait is set.
func newFixture(t *testing.T, rt *runnertest.Runtime, pcfg pool.Config, acfg api.Config, wait bool) *fixture {
	t.Helper()
	if pcfg.Templates == nil {
		pcfg.Templates = []pool.Template{
			{Name: "python", Spec: runner.Spec{Language: "python"}, Size: 1},
			{Name: "node", Spec: runner.Spec{Language: "node"}, Size: 0},
		}
	}
	m, err := pool.New(rt, pcfg, nil)
	if err != nil {
		t.Fatalf("pool.New: %v", err)
	}
	m.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Errorf("pool Close: %v", err)
		}
		if live := rt.Live(); live != 0 {
			t.Errorf("Live after Close = %d, want 0", live)
		}
	})
	if wait {
		waitFor(t, "pool ready", func() bool {
			for _, s := range m.Stats() {
				if s.Ready < s.Target {
					return false
				}
			}
			return m.Ready()
		})
	}
	acfg.Pool = m
	if acfg.Templates == nil {
		acfg.Templates = testTemplates
	}
	return &fixture{h: api.New(acfg), rt: rt, pool: m}
}

// do serves one request and returns the recorded response.
func (f *fixture) do(t *testing.T, method, target, body string) *httptest.ResponseRecorder {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequestWithContext(t.Context(), method, target, r)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	return rec
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	// The bound is a safety net, not a speed the machine must reach.
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func checkResponse(t *testing.T, rec *httptest.ResponseRecorder, wantStatus int, wantBody string) {
	t.Helper()
	if rec.Code != wantStatus {
		t.Errorf("status = %d, want %d", rec.Code, wantStatus)
	}
	if got := rec.Body.String(); got != wantBody {
		t.Errorf("body = %s\nwant   %s", got, wantBody)
	}
	if got, want := rec.Header().Get("Content-Type"), "application/json; charset=utf-8"; wantBody != "" && got != want {
		t.Errorf("Content-Type = %q, want %q", got, want)
	}
}

// jsonString encodes s as our responses do (no HTML escaping).
func jsonString(t *testing.T, s string) string {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
