package api_test

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/api"
	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

func TestSessionLifecycle(t *testing.T) {
	f := newSessionFixture(t, &runnertest.Runtime{}, kernels.Config{}, api.Config{})

	rec := f.do(t, http.MethodPost, "/v1/sessions", `{"language":"python","ttl_s":60,"env":{"A":"1"}}`)
	f.clock.Advance(time.Second)
	id := f.create(t, `{"language":"node"}`) // a second session, to list
	body := rec.Body.String()
	pyID := body[len(`{"id":"`) : len(`{"id":"`)+32]
	dropCreateTiming(t, rec)
	checkResponse(t, rec, http.StatusCreated, `{"id":"`+pyID+`","language":"python","template":"python","state":"idle",`+
		`"execution_count":0,"created_at":"2026-03-01T12:00:00Z","last_used_at":"2026-03-01T12:00:00Z",`+
		`"expires_at":"2026-03-01T12:01:00Z","ttl_s":60,"warm":false,"start":"cold"}`+"\n")
	if got, want := rec.Header().Get("Location"), "/v1/sessions/"+pyID; got != want {
		t.Errorf("Location = %q, want %q", got, want)
	}
	if got := f.kernel(t, 1).Options.Env["A"]; got != "1" {
		t.Errorf("kernel env A = %q, want 1", got)
	}

	f.clock.Advance(9 * time.Second)
	rec = f.do(t, http.MethodPost, "/v1/sessions/"+pyID+"/execute", `{"code":"x = 41\nprint hi\nx"}`)
	if rec.Code != http.StatusOK {
		t.Fatalf("execute: status %d, body %s", rec.Code, rec.Body)
	}
	if got, want := fixTiming(rec.Body.String()), `{"execution_count":1,"stdout":"hi\n","stderr":"",`+
		`"results":[{"data":{"text/plain":"41"},"metadata":{},"main":true}],"error":null,"status":"ok","reason":"ok",`+
		`"warm":false,"start":"cold","timing":{"queue_ms":Q,"acquire_ms":0,"start_ms":0,"exec_ms":1,"total_ms":T}}`+"\n"; got != want {
		t.Errorf("execute body = %s\nwant           %s", got, want)
	}

	rec = f.do(t, http.MethodGet, "/v1/sessions", "")
	checkResponse(t, rec, http.StatusOK, `{"sessions":[`+
		`{"id":"`+pyID+`","language":"python","template":"python","state":"idle","execution_count":1,`+
		`"created_at":"2026-03-01T12:00:00Z","last_used_at":"2026-03-01T12:00:10Z","expires_at":"2026-03-01T12:01:10Z","ttl_s":60,"warm":false,"start":"cold"},`+
		`{"id":"`+id+`","language":"node","template":"node","state":"idle","execution_count":0,`+
		`"created_at":"2026-03-01T12:00:01Z","last_used_at":"2026-03-01T12:00:01Z","expires_at":"2026-03-01T12:15:01Z","ttl_s":900,"warm":false,"start":"cold"}`+
		`]}`+"\n")

	rec = f.do(t, http.MethodGet, "/v1/sessions/"+id, "")
	checkResponse(t, rec, http.StatusOK, `{"id":"`+id+`","language":"node","template":"node","state":"idle","execution_count":0,`+
		`"created_at":"2026-03-01T12:00:01Z","last_used_at":"2026-03-01T12:00:01Z","expires_at":"2026-03-01T12:15:01Z","ttl_s":900,"warm":false,"start":"cold"}`+"\n")

	rec = f.do(t, http.MethodDelete, "/v1/sessions/"+id, "")
	checkResponse(t, rec, http.StatusNoContent, "")
	notFound := `{"code":"session_not_found","message":"no such session (it may have expired or been deleted)"}` + "\n"
	checkResponse(t, f.do(t, http.MethodGet, "/v1/sessions/"+id, ""), http.StatusNotFound, notFound)
	checkResponse(t, f.do(t, http.MethodDelete, "/v1/sessions/"+id, ""), http.StatusNotFound, notFound)

	// Idle past its TTL: gone, before any reaper pass.
	f.clock.Advance(time.Minute)
	checkResponse(t, f.do(t, http.MethodGet, "/v1/sessions/"+pyID, ""), http.StatusNotFound, notFound)
	checkResponse(t, f.do(t, http.MethodPost, "/v1/sessions/"+pyID+"/execute", `{"code":"1"}`), http.StatusNotFound, notFound)
	checkResponse(t, f.do(t, http.MethodGet, "/v1/sessions", ""), http.StatusOK, `{"sessions":[]}`+"\n")
	waitFor(t, "sandboxes released", func() bool { return f.rt.Live() == 0 })
}

func TestCreateSessionValidation(t *testing.T) {
	f := newSessionFixture(t, &runnertest.Runtime{}, kernels.Config{MaxTTL: time.Hour, DefaultTTL: time.Minute}, api.Config{})
	tests := []struct {
		name     string
		body     string
		wantBody string
	}{
		{"empty body", "", `{"code":"invalid_json","message":"request body is empty; expected a JSON object"}`},
		{"unknown field", `{"language":"python","lang":"x"}`, `{"code":"unknown_field","message":"unknown field \"lang\""}`},
		{"missing language", `{}`, `{"code":"invalid_request","message":"language is required (one of: node, python)"}`},
		{"unknown language", `{"language":"ruby"}`, `{"code":"unknown_language","message":"unknown language \"ruby\" (known: node, python)"}`},
		{"unknown template", `{"template":"python-huge"}`, `{"code":"unknown_template","message":"unknown template \"python-huge\" (known: node, python)"}`},
		{"template of another language", `{"language":"node","template":"python"}`, `{"code":"template_language","message":"template \"python\" runs python, not node"}`},
		{"negative ttl", `{"language":"python","ttl_s":-1}`, `{"code":"invalid_request","message":"ttl_s must be between 1 and 3600, or 0 for the default (60); got -1"}`},
		{"ttl over max", `{"language":"python","ttl_s":3601}`, `{"code":"invalid_request","message":"ttl_s must be between 1 and 3600, or 0 for the default (60); got 3601"}`},
		{"ttl not an integer", `{"language":"python","ttl_s":1.5}`, `{"code":"invalid_json","message":"field \"ttl_s\" must be an integer, got number 1.5"}`},
		{"bad env", `{"language":"python","env":{"A=B":"1"}}`, `{"code":"invalid_request","message":"env key \"A=B\" must not contain '='"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkResponse(t, f.do(t, http.MethodPost, "/v1/sessions", tc.body), http.StatusBadRequest, tc.wantBody+"\n")
		})
	}
	if got := f.rt.Starts(); got != 0 {
		t.Errorf("bad requests started %d sandboxes", got)
	}
}

// ttl_s is bounded by the sessions' maximum lifetime, and a cell's
// timeout_ms by the kernels' maximum, whatever the request asks.
func TestSessionMaximaRefused(t *testing.T) {
	f := newSessionFixture(t, &runnertest.Runtime{}, kernels.Config{MaxLifetime: 2 * time.Hour, MaxTimeout: 2 * time.Second}, api.Config{})
	checkResponse(t, f.do(t, http.MethodPost, "/v1/sessions", `{"language":"python","ttl_s":7201}`), http.StatusBadRequest,
		`{"code":"invalid_request","message":"ttl_s must be between 1 and 7200, or 0 for the default (900); got 7201"}`+"\n")
	id := f.create(t, `{"language":"python","ttl_s":7200}`)
	checkResponse(t, f.do(t, http.MethodPost, "/v1/sessions/"+id+"/execute", `{"code":"1","timeout_ms":2001}`), http.StatusBadRequest,
		`{"code":"invalid_request","message":"timeout_ms must be between 1 and 2000, or 0 for the default (2000); got 2001"}`+"\n")
}

// A session's limits are checked as a run's, against the same maxima, and
// its sandbox is started with them.
func TestSessionLimits(t *testing.T) {
	rt := &runnertest.Runtime{}
	f := newSessionFixture(t, rt, kernels.Config{}, api.Config{Config: core.Config{MaxMemoryMB: 256}})
	checkResponse(t, f.do(t, http.MethodPost, "/v1/sessions", `{"language":"python","limits":{"memory_mb":512}}`), http.StatusBadRequest,
		`{"code":"invalid_request","message":"limits.memory_mb must be between 64 and 256 (MiB); got 512"}`+"\n")
	if got := rt.Starts(); got != 0 {
		t.Errorf("a refused session started %d sandboxes", got)
	}
	f.create(t, `{"language":"python","limits":{"memory_mb":128,"processes":32}}`)
	sbs := rt.Sandboxes()
	if len(sbs) != 1 {
		t.Fatalf("%d sandboxes started, want 1", len(sbs))
	}
	if l := sbs[0].Spec.Limits; l.MemoryBytes != 128<<20 || l.Processes != 32 {
		t.Errorf("session sandbox limits %+v, want 128 MiB and 32 processes", l)
	}
}

func TestTooManySessions(t *testing.T) {
	f := newSessionFixture(t, &runnertest.Runtime{}, kernels.Config{MaxSessions: 1, ReapInterval: 5 * time.Second}, api.Config{})
	id := f.create(t, `{"language":"python"}`)
	rec := f.do(t, http.MethodPost, "/v1/sessions", `{"language":"python"}`)
	checkResponse(t, rec, http.StatusTooManyRequests,
		`{"code":"too_many_sessions","message":"the server holds its maximum of 1 sessions; delete one of yours or retry later"}`+"\n")
	if got := rec.Header().Get("Retry-After"); got != "5" {
		t.Errorf("Retry-After = %q, want 5", got)
	}
	checkResponse(t, f.do(t, http.MethodDelete, "/v1/sessions/"+id, ""), http.StatusNoContent, "")
	f.create(t, `{"language":"python"}`)
}

func TestSessionsDisabled(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, pool.Config{}, api.Config{}, false)
	want := `{"code":"not_implemented","message":"sessions are not enabled on this server"}` + "\n"
	for _, r := range []struct{ method, target string }{
		{http.MethodPost, "/v1/sessions"},
		{http.MethodGet, "/v1/sessions"},
		{http.MethodPost, "/v1/sessions/abc/execute"},
		{http.MethodGet, "/v1/sessions/abc/files"},
	} {
		checkResponse(t, f.do(t, r.method, r.target, `{}`), http.StatusNotImplemented, want)
	}
}

func TestInterruptAndRestart(t *testing.T) {
	f := newSessionFixture(t, &runnertest.Runtime{}, kernels.Config{}, api.Config{})
	id := f.create(t, `{"language":"python","ttl_s":60}`)
	if rec := f.do(t, http.MethodPost, "/v1/sessions/"+id+"/execute", `{"code":"x = 1"}`); rec.Code != http.StatusOK {
		t.Fatalf("execute: %d %s", rec.Code, rec.Body)
	}
	k := f.kernel(t, 1)
	done := make(chan string, 1)
	go func() {
		rec := f.do(t, http.MethodPost, "/v1/sessions/"+id+"/execute", `{"code":"sleep 1h"}`)
		done <- fixTiming(rec.Body.String())
	}()
	waitFor(t, "cell running", k.Running)
	checkResponse(t, f.do(t, http.MethodPost, "/v1/sessions/"+id+"/interrupt", ""), http.StatusNoContent, "")
	if got, want := <-done, `{"execution_count":2,"stdout":"","stderr":"","results":[],"error":null,"status":"aborted",`+
		`"reason":"interrupted","warm":false,"start":"cold","timing":{"queue_ms":Q,"acquire_ms":0,"start_ms":0,"exec_ms":1,"total_ms":T}}`+"\n"; got != want {
		t.Errorf("interrupted cell = %s\nwant                %s", got, want)
	}

	f.clock.Advance(time.Second)
	checkResponse(t, f.do(t, http.MethodPost, "/v1/sessions/"+id+"/restart", ""), http.StatusOK,
		`{"id":"`+id+`","language":"python","template":"python","state":"idle","execution_count":0,`+
			`"created_at":"2026-03-01T12:00:00Z","last_used_at":"2026-03-01T12:00:01Z","expires_at":"2026-03-01T12:01:01Z","ttl_s":60,"warm":false,"start":"cold"}`+"\n")
	rec := f.do(t, http.MethodPost, "/v1/sessions/"+id+"/execute", `{"code":"x"}`)
	if got := fixTiming(rec.Body.String()); !strings.Contains(got, `"results":[{"data":{"text/plain":"x"},"metadata":{},"main":true}]`) {
		t.Errorf("after restart x should be unset: %s", got)
	}
	if got := k.Restarts(); got != 1 {
		t.Errorf("Restarts = %d, want 1", got)
	}
}

var createTiming = regexp.MustCompile(`,"timing":\{"acquire_ms":[0-9.]+,"start_ms":[0-9.]+,"kernel_ms":[0-9.]+,"total_ms":[0-9.]+\}`)

// dropCreateTiming checks that a create's answer carries its timing and
// removes it, since the values vary.
func dropCreateTiming(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	b := rec.Body.Bytes()
	if !createTiming.Match(b) {
		t.Fatalf("create answer without timing: %s", b)
	}
	b = createTiming.ReplaceAll(b, nil)
	rec.Body.Reset()
	rec.Body.Write(b)
}
