package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/api"
	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// scrape serves GET /metrics (with token when not empty) and returns the
// body, failing unless the answer is a 200 in the text format.
func scrape(t *testing.T, h http.Handler, token string) string {
	t.Helper()
	rec := serveAs(t, h, http.MethodGet, "/metrics", "", token)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: status %d, body %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type = %q, want text/plain", ct)
	}
	return rec.Body.String()
}

// checkLines fails for each of want that is not a whole line of body.
func checkLines(t *testing.T, body string, want []string) {
	t.Helper()
	lines := map[string]bool{}
	for l := range strings.SplitSeq(body, "\n") {
		lines[l] = true
	}
	for _, w := range want {
		if !lines[w] {
			t.Errorf("missing line %s", w)
		}
	}
}

// checkSeries fails for each of want, a metric name with its labels, that
// has no sample in body, whatever its value.
func checkSeries(t *testing.T, body string, want []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(body, "\n"+w+" ") {
			t.Errorf("missing series %s", w)
		}
	}
}

func TestMetricsAfterRuns(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, pool.Config{}, api.Config{}, true)
	for _, body := range []string{`{"language":"python","code":"1"}`, `{"language":"node","code":"1"}`} {
		if rec := f.do(t, http.MethodPost, "/v1/run", body); rec.Code != http.StatusOK {
			t.Fatalf("run %s: status %d, body %s", body, rec.Code, rec.Body)
		}
	}
	waitFor(t, "python pool refilled", func() bool { return f.pool.Stats()[0].Ready == 1 })

	body := scrape(t, f.h, "")
	checkLines(t, body, []string{
		`# TYPE paddock_run_phase_seconds histogram`,
		`paddock_run_phase_seconds_count{phase="queue",start="pool",template="python"} 1`,
		`paddock_run_phase_seconds_count{phase="acquire",start="pool",template="python"} 1`,
		`paddock_run_phase_seconds_count{phase="start",start="pool",template="python"} 1`,
		`paddock_run_phase_seconds_count{phase="exec",start="pool",template="python"} 1`,
		`paddock_run_phase_seconds_count{phase="total",start="pool",template="python"} 1`,
		`paddock_run_phase_seconds_bucket{phase="total",start="pool",template="python",le="30"} 1`,
		`paddock_run_phase_seconds_bucket{phase="start",start="pool",template="python",le="0.0005"} 1`,
		`paddock_run_phase_seconds_count{phase="total",start="cold",template="node"} 1`,

		`# TYPE paddock_pool_ready gauge`,
		`paddock_pool_ready{template="python"} 1`,
		`paddock_pool_ready{template="node"} 0`,
		`paddock_pool_target{template="python"} 1`,
		`paddock_pool_target{template="node"} 0`,
		`paddock_pool_in_use{template="python"} 0`,
		`paddock_pool_in_use{template="node"} 0`,
		`# TYPE paddock_pool_hits_total counter`,
		`paddock_pool_hits_total{template="python"} 1`,
		`paddock_pool_misses_total{template="node"} 1`,
		`paddock_pool_snapshot_state{state="off",template="python"} 1`,
		`paddock_pool_snapshot_state{state="ready",template="python"} 0`,
	})
	checkSeries(t, body, []string{
		`paddock_pool_floor{template="python"}`,
		`paddock_pool_ceiling{template="python"}`,
		`paddock_pool_starting{template="python"}`,
		`paddock_pool_waiting{template="python"}`,
		`paddock_start_budget`,
		`paddock_pool_restores_total{template="python"}`,
		`paddock_pool_cold_starts_total{template="python"}`,
		`paddock_pool_restore_failures_total{template="python"}`,
		`paddock_pool_start_failures_total{template="python"}`,
		`go_goroutines`,
	})
	if strings.Contains(body, "paddock_execute_phase_seconds_count") {
		t.Errorf("execute histogram has samples before any execute:\n%s", body)
	}
}

// Each server has its own registry: a second one starts from zero.
func TestMetricsPerServer(t *testing.T) {
	f1 := newFixture(t, &runnertest.Runtime{}, pool.Config{}, api.Config{}, true)
	f2 := newFixture(t, &runnertest.Runtime{}, pool.Config{}, api.Config{}, true)
	if rec := f1.do(t, http.MethodPost, "/v1/run", `{"language":"python","code":"1"}`); rec.Code != http.StatusOK {
		t.Fatalf("run: status %d, body %s", rec.Code, rec.Body)
	}
	if body := scrape(t, f2.h, ""); strings.Contains(body, "paddock_run_phase_seconds_count") {
		t.Errorf("second server shows the first one's runs:\n%s", body)
	}
}

func TestMetricsExecute(t *testing.T) {
	f := newSessionFixture(t, &runnertest.Runtime{}, kernels.Config{}, api.Config{})
	id := f.create(t, `{"language":"python"}`)
	if rec := f.do(t, http.MethodPost, "/v1/sessions/"+id+"/execute", `{"code":"1"}`); rec.Code != http.StatusOK {
		t.Fatalf("execute: status %d, body %s", rec.Code, rec.Body)
	}
	rec := f.doWith(t, http.MethodPost, "/v1/sessions/"+id+"/execute", `{"code":"2"}`,
		map[string]string{"Accept": "application/x-ndjson"})
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"type":"end"`) {
		t.Fatalf("streamed execute: status %d, body %s", rec.Code, rec.Body)
	}
	if rec := f.do(t, http.MethodPost, "/v1/sessions/nope/execute", `{"code":"3"}`); rec.Code != http.StatusNotFound {
		t.Fatalf("execute in a missing session: status %d, want 404", rec.Code)
	}

	// The fixture has no pool: its session's sandbox is a cold start.
	checkLines(t, scrape(t, f.h, ""), []string{
		`# TYPE paddock_execute_phase_seconds histogram`,
		`paddock_execute_phase_seconds_count{phase="queue",start="cold",template="python"} 2`,
		`paddock_execute_phase_seconds_count{phase="exec",start="cold",template="python"} 2`,
		`paddock_execute_phase_seconds_count{phase="total",start="cold",template="python"} 2`,
		`paddock_execute_phase_seconds_bucket{phase="total",start="cold",template="python",le="30"} 2`,
	})
}

func TestMetricsAuth(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, pool.Config{}, api.Config{Config: core.Config{Auth: api.Auth{HS256Secret: testSecret}, Now: func() time.Time { return t0 }}}, false)
	tests := []struct {
		name       string
		token      string
		wantStatus int
		wantBody   string
	}{
		{"no token", "", http.StatusUnauthorized,
			`{"code":"invalid_token","message":"missing bearer token (send Authorization: Bearer <JWT>)"}` + "\n"},
		{"bad signature", hs256(t, t0, "ops", "admin") + "x", http.StatusUnauthorized, ""},
		{"run and sessions", hs256(t, t0, "ops", "run sessions"), http.StatusForbidden,
			`{"code":"insufficient_scope","message":"this token does not grant the \"admin\" scope this route needs"}` + "\n"},
		{"admin", hs256(t, t0, "ops", "admin"), http.StatusOK, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := serveAs(t, f.h, http.MethodGet, "/metrics", "", tc.token)
			if rec.Code != tc.wantStatus {
				t.Errorf("status = %d, want %d (body %s)", rec.Code, tc.wantStatus, rec.Body)
			}
			if tc.wantBody != "" {
				checkResponse(t, rec, tc.wantStatus, tc.wantBody)
			}
			if tc.wantStatus == http.StatusOK && !strings.Contains(rec.Body.String(), "# TYPE paddock_pool_ready gauge") {
				t.Errorf("body has no pool gauges:\n%s", rec.Body)
			}
		})
	}
}
