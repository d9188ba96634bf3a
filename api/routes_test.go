package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/paddock-dev/paddock/api"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

func TestRoutes(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, pool.Config{}, api.Config{}, true)
	tests := []struct {
		name       string
		method     string
		target     string
		wantStatus int
		wantBody   string
		wantAllow  string
	}{
		{name: "healthz", method: http.MethodGet, target: "/healthz", wantStatus: http.StatusOK, wantBody: `{"status":"ok"}` + "\n"},
		{name: "unknown route", method: http.MethodGet, target: "/v2/run", wantStatus: http.StatusNotFound, wantBody: `{"code":"not_found","message":"no such route"}` + "\n"},
		{name: "trailing slash", method: http.MethodPost, target: "/v1/run/", wantStatus: http.StatusNotFound, wantBody: `{"code":"not_found","message":"no such route"}` + "\n"},
		{name: "wrong method", method: http.MethodGet, target: "/v1/run", wantStatus: http.StatusMethodNotAllowed, wantBody: `{"code":"method_not_allowed","message":"method GET is not allowed here"}` + "\n", wantAllow: "POST"},
		{name: "wrong method on templates", method: http.MethodDelete, target: "/v1/templates", wantStatus: http.StatusMethodNotAllowed, wantBody: `{"code":"method_not_allowed","message":"method DELETE is not allowed here"}` + "\n", wantAllow: "GET"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := f.do(t, tc.method, tc.target, "")
			checkResponse(t, rec, tc.wantStatus, tc.wantBody)
			if got := rec.Header().Get("Allow"); got != tc.wantAllow {
				t.Errorf("Allow = %q, want %q", got, tc.wantAllow)
			}
		})
	}
}

func TestReadyz(t *testing.T) {
	gate := make(chan struct{})
	rt := &runnertest.Runtime{}
	rt.StartFunc = func(ctx context.Context, spec runner.Spec) (runner.Sandbox, error) {
		select {
		case <-gate:
			return rt.NewSandbox(spec), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f := newFixture(t, rt, pool.Config{}, api.Config{}, false)

	rec := f.do(t, http.MethodGet, "/readyz", "")
	checkResponse(t, rec, http.StatusServiceUnavailable, `{"status":"starting","ready_templates":["node"],"templates":[`+
		`{"name":"python","target":1,"ready":0,"healthy":false,"image":"ready"},`+
		`{"name":"node","target":0,"ready":0,"healthy":false,"image":"ready"}]}`+"\n")

	close(gate)
	waitFor(t, "pool ready", f.pool.Ready)
	rec = f.do(t, http.MethodGet, "/readyz", "")
	checkResponse(t, rec, http.StatusOK, `{"status":"ready","ready_templates":["python","node"],"templates":[`+
		`{"name":"python","target":1,"ready":1,"healthy":true,"image":"ready"},`+
		`{"name":"node","target":0,"ready":0,"healthy":false,"image":"ready"}]}`+"\n")
}

// A template whose root filesystem is still being built is not ready:
// /readyz names the others, and its runs are refused with a retry delay
// until the pool is given its root filesystem.
func TestReadyzWhileATemplateBuilds(t *testing.T) {
	rt := &runnertest.Runtime{}
	f := newFixture(t, rt, pool.Config{Templates: []pool.Template{
		{Name: "python", Spec: runner.Spec{Language: "python"}, Size: 1},
		{Name: "node", Spec: runner.Spec{Language: "node"}, Size: 0, Deferred: true},
	}}, api.Config{}, false)
	pythonFilled := func() bool { st := f.pool.Stats()[0]; return st.Healthy && st.Ready == 1 }
	waitFor(t, "python filled", pythonFilled)

	rec := f.do(t, http.MethodGet, "/readyz", "")
	checkResponse(t, rec, http.StatusServiceUnavailable, `{"status":"starting","ready_templates":["python"],"templates":[`+
		`{"name":"python","target":1,"ready":1,"healthy":true,"image":"ready"},`+
		`{"name":"node","target":0,"ready":0,"healthy":false,"image":"building"}]}`+"\n")
	rec = f.do(t, http.MethodPost, "/v1/run", `{"language":"node","code":"1"}`)
	checkResponse(t, rec, http.StatusServiceUnavailable, `{"code":"template_building","message":"the node template's root filesystem is still being built, `+
		`as on a server's first start; retry after 10 s (GET /readyz names the templates that serve now)"}`+"\n")
	if got := rec.Header().Get("Retry-After"); got != "10" {
		t.Errorf("Retry-After = %q, want 10", got)
	}
	rec = f.do(t, http.MethodPost, "/v1/run", `{"language":"python","code":"1"}`)
	if rec.Code != http.StatusOK {
		t.Errorf("python run while node builds: %d %s", rec.Code, rec.Body)
	}

	if err := f.pool.Provide("node", "/images/node", "node@1"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "python refilled", pythonFilled)
	rec = f.do(t, http.MethodGet, "/readyz", "")
	checkResponse(t, rec, http.StatusOK, `{"status":"ready","ready_templates":["python","node"],"templates":[`+
		`{"name":"python","target":1,"ready":1,"healthy":true,"image":"ready"},`+
		`{"name":"node","target":0,"ready":0,"healthy":false,"image":"ready"}]}`+"\n")
	rec = f.do(t, http.MethodPost, "/v1/run", `{"language":"node","code":"1"}`)
	if rec.Code != http.StatusOK {
		t.Errorf("node run once provided: %d %s", rec.Code, rec.Body)
	}
}

func TestTemplates(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, pool.Config{}, api.Config{}, true)
	rec := f.do(t, http.MethodGet, "/v1/templates", "")
	checkResponse(t, rec, http.StatusOK, `{"templates":[`+
		`{"name":"python","language":"python","description":"Python 3 with numpy","versions":{"python":"3.11.2"},`+
		`"limits":{"memory_mb":512,"processes":64,"cpus":1,"disk_mb":64,"open_files":0,"timeout_ms":30000},"network":{"mode":"none"},`+
		`"pool":{"target":1,"floor":1,"ceiling":1,"ready":1,"in_use":0,"starting":0,"waiting":0,"healthy":true,"image":"ready","snapshot":"off","hits":0,"misses":0,"restores":0,"cold_starts":1,"restore_failures":0,"kernels":0,"kernels_ready":0,"kernels_starting":0,"kernel_hits":0,"kernel_misses":0}},`+
		`{"name":"node","language":"node","description":"Node.js","versions":{},`+
		`"limits":{"memory_mb":0,"processes":0,"cpus":0,"disk_mb":0,"open_files":0,"timeout_ms":0},"network":{"mode":"none"},`+
		`"pool":{"target":0,"floor":0,"ceiling":0,"ready":0,"in_use":0,"starting":0,"waiting":0,"healthy":false,"image":"ready","snapshot":"off","hits":0,"misses":0,"restores":0,"cold_starts":0,"restore_failures":0,"kernels":0,"kernels_ready":0,"kernels_starting":0,"kernel_hits":0,"kernel_misses":0}}],`+
		`"min_limits":{"memory_mb":64,"processes":16,"cpus":0.25,"disk_mb":16,"open_files":64,"timeout_ms":1},`+
		`"max_limits":{"memory_mb":2048,"processes":256,"cpus":2,"disk_mb":2048,"open_files":4096,"timeout_ms":60000}}`+"\n")
}
