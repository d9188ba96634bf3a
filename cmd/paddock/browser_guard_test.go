package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/paddock-dev/paddock/core"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/api"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// A real browser (Debian's Chromium) opens a page of another origin that
// posts a run to two Paddocks the way any web page could: a fetch with a
// plain-text body, which needs no CORS preflight. The Paddock as shipped
// never runs it; the one told --allowed-origins for that page does, which
// shows the browser really sent it.
func TestBrowserCrossSiteRun(t *testing.T) {
	node := needClients(t)
	if _, err := os.Stat("/usr/bin/chromium"); err != nil {
		jupyterMissing(t, "Debian's chromium")
	}
	// The page's address, its origin, comes first: the allowing Paddock
	// is told of it before the page is served.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	origin := "http://" + ln.Addr().String()
	shipped, shippedRuns := guardedAPI(t)
	allowing, allowedRuns := guardedAPI(t, "--allowed-origins="+origin)
	page := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><script>
const body = JSON.stringify({language: 'python', code: 'print(1)'});
const post = (url) => fetch(url + '/v1/run', {method: 'POST', mode: 'no-cors', headers: {'Content-Type': 'text/plain'}, body})
  .then((r) => r.type, (e) => 'error: ' + e);
Promise.all([post(%q), post(%q)]).then((results) => { window.crossSiteReport = results; window.crossSiteDone = true; });
</script>`, shipped.URL, allowing.URL)
	})}}
	page.Start()
	t.Cleanup(page.Close)

	out, err := runClient(t, nil, node, "cross_site.mjs", page.URL)
	if err != nil {
		t.Fatalf("cross_site.mjs: %v", err)
	}
	var report []string
	if err := json.Unmarshal(out, &report); err != nil || len(report) != 2 {
		t.Fatalf("report %q: %v", out, err)
	}
	if got := allowedRuns.Load(); got != 1 {
		t.Fatalf("the allowing Paddock ran %d runs, want 1 (the browser sent nothing?); page report %q", got, report)
	}
	if got := shippedRuns.Load(); got != 0 {
		t.Fatalf("the shipped Paddock ran %d runs from another origin's page, want 0", got)
	}
	t.Logf("page report %q", report)
}

// guardedAPI serves /v1 over a fake pool with the browser guard that
// `paddock serve args…` configures, and counts the runs that reach it.
func guardedAPI(t *testing.T, args ...string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	clearAuthEnv(t)
	cfg, err := serveConfig(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	runs := new(atomic.Int64)
	rt := &runnertest.Runtime{RunFunc: func(context.Context, runner.RunRequest, runner.OutputFunc) (runner.RunResult, error) {
		runs.Add(1)
		return runner.RunResult{Reason: runner.ReasonOK}, nil
	}}
	p, err := pool.New(rt, pool.Config{Templates: []pool.Template{{Name: "python", Spec: runner.Spec{Language: "python"}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Start()
	srv := httptest.NewServer(api.New(api.Config{Guard: cfg.guard, Config: core.Config{Pool: p, Templates: []api.Template{{Name: "python", Language: "python"}}, Auth: cfg.auth}}))
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := p.Close(ctx); err != nil {
			t.Errorf("pool Close: %v", err)
		}
	})
	return srv, runs
}
