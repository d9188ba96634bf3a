package api_test

import (
	"context"
	"github.com/paddock-dev/paddock/core"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/api"
	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// checkHeaders compares the named response headers.
func checkHeaders(t *testing.T, rec *httptest.ResponseRecorder, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got := rec.Header().Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
}

func TestTenantRunLimit(t *testing.T) {
	release := make(chan struct{})
	running := make(chan struct{}, 4)
	rt := &runnertest.Runtime{RunFunc: func(ctx context.Context, req runner.RunRequest, _ runner.OutputFunc) (runner.RunResult, error) {
		if req.Code == "block" {
			running <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
				return runner.RunResult{}, ctx.Err()
			}
		}
		return runner.RunResult{Reason: runner.ReasonOK}, nil
	}}
	f := newFixture(t, rt, pool.Config{}, api.Config{Config: core.Config{Auth: api.Auth{HS256Secret: testSecret}, TenantMaxRuns: 2, TenantRunQueue: -1}}, true)
	now := time.Now()
	alice, bob := hs256(t, now, "alice", "run"), hs256(t, now, "bob", "run")

	results := make(chan int, 2)
	for range 2 {
		go func() {
			req := httptest.NewRequest(http.MethodPost, "/v1/run", strings.NewReader(`{"language":"python","code":"block"}`))
			req.Header.Set("Authorization", "Bearer "+alice)
			rec := httptest.NewRecorder()
			f.h.ServeHTTP(rec, req)
			results <- rec.Code
		}()
	}
	<-running
	<-running

	rec := serveAs(t, f.h, http.MethodPost, "/v1/run", `{"language":"python","code":"x"}`, alice)
	checkResponse(t, rec, http.StatusTooManyRequests,
		`{"code":"too_many_runs","message":"you have 2 runs in flight, the most one tenant may; retry when one finishes"}`+"\n")
	checkHeaders(t, rec, map[string]string{"Retry-After": "1", "RateLimit-Limit": "40"})

	rec = serveAs(t, f.h, http.MethodPost, "/v1/run", `{"language":"python","code":"x"}`, bob)
	if rec.Code != http.StatusOK {
		t.Errorf("bob's run: %d %s, want 200", rec.Code, rec.Body)
	}
	close(release)
	for range 2 {
		if code := <-results; code != http.StatusOK {
			t.Errorf("alice's blocked run: %d, want 200", code)
		}
	}
	if rec := serveAs(t, f.h, http.MethodPost, "/v1/run", `{"language":"python","code":"x"}`, alice); rec.Code != http.StatusOK {
		t.Errorf("alice's run after release: %d %s, want 200", rec.Code, rec.Body)
	}
}

func TestTenantSessionLimit(t *testing.T) {
	f := newSessionFixture(t, &runnertest.Runtime{}, kernels.Config{ReapInterval: 7 * time.Second},
		api.Config{Config: core.Config{Auth: api.Auth{HS256Secret: testSecret}, TenantMaxSessions: 2}})
	alice, bob := hs256(t, t0, "alice", "sessions"), hs256(t, t0, "bob", "sessions")
	create := func(token string) *httptest.ResponseRecorder {
		return serveAs(t, f.h, http.MethodPost, "/v1/sessions", `{"language":"python"}`, token)
	}
	var ids []string
	for range 2 {
		rec := create(alice)
		if rec.Code != http.StatusCreated {
			t.Fatalf("alice's create: %d %s", rec.Code, rec.Body)
		}
		ids = append(ids, rec.Body.String()[len(`{"id":"`):len(`{"id":"`)+32])
	}
	rec := create(alice)
	checkResponse(t, rec, http.StatusTooManyRequests, `{"code":"too_many_sessions","message":"you hold 2 sessions, `+
		`the most one tenant may; delete one (or let one expire) and retry"}`+"\n")
	checkHeaders(t, rec, map[string]string{"Retry-After": "7"})
	if rec := create(bob); rec.Code != http.StatusCreated {
		t.Errorf("bob's create: %d %s, want 201", rec.Code, rec.Body)
	}
	checkResponse(t, serveAs(t, f.h, http.MethodDelete, "/v1/sessions/"+ids[0], "", alice), http.StatusNoContent, "")
	if rec := create(alice); rec.Code != http.StatusCreated {
		t.Errorf("alice's create after a delete: %d %s, want 201", rec.Code, rec.Body)
	}
}

func TestTenantRateLimit(t *testing.T) {
	f := newSessionFixture(t, &runnertest.Runtime{}, kernels.Config{},
		api.Config{Config: core.Config{Auth: api.Auth{HS256Secret: testSecret}, TenantRate: 1, TenantBurst: 2}})
	alice, bob := hs256(t, t0, "alice", "sessions"), hs256(t, t0, "bob", "sessions")
	const limited = `{"code":"rate_limited","message":"too many requests: each tenant may send 1 per second ` +
		`(bursts of 2); retry after the Retry-After seconds"}` + "\n"
	tests := []struct {
		name       string
		advance    time.Duration
		token      string
		wantStatus int
		want       map[string]string
	}{
		{"first", 0, alice, http.StatusOK, map[string]string{"RateLimit-Limit": "2", "RateLimit-Remaining": "1", "RateLimit-Reset": "1", "Retry-After": ""}},
		{"second", 0, alice, http.StatusOK, map[string]string{"RateLimit-Limit": "2", "RateLimit-Remaining": "0", "RateLimit-Reset": "2", "Retry-After": ""}},
		{"third refused", 0, alice, http.StatusTooManyRequests, map[string]string{"RateLimit-Limit": "2", "RateLimit-Remaining": "0", "RateLimit-Reset": "2", "Retry-After": "1"}},
		{"another tenant", 0, bob, http.StatusOK, map[string]string{"RateLimit-Limit": "2", "RateLimit-Remaining": "1", "RateLimit-Reset": "1"}},
		{"half a token later", 500 * time.Millisecond, alice, http.StatusTooManyRequests, map[string]string{"RateLimit-Remaining": "0", "RateLimit-Reset": "2", "Retry-After": "1"}},
		{"a token later", 500 * time.Millisecond, alice, http.StatusOK, map[string]string{"RateLimit-Remaining": "0", "RateLimit-Reset": "2"}},
		{"refilled", 10 * time.Second, alice, http.StatusOK, map[string]string{"RateLimit-Remaining": "1", "RateLimit-Reset": "1"}},
	}
	for _, tc := range tests { // in order: each builds on the last
		t.Run(tc.name, func(t *testing.T) {
			f.clock.Advance(tc.advance)
			rec := serveAs(t, f.h, http.MethodGet, "/v1/sessions", "", tc.token)
			if tc.wantStatus == http.StatusTooManyRequests {
				checkResponse(t, rec, tc.wantStatus, limited)
			} else if rec.Code != tc.wantStatus {
				t.Errorf("status %d, want %d", rec.Code, tc.wantStatus)
			}
			checkHeaders(t, rec, tc.want)
		})
	}
}

// Without auth the one anonymous tenant gets the same limits.
func TestAnonymousTenantLimits(t *testing.T) {
	f := newSessionFixture(t, &runnertest.Runtime{}, kernels.Config{}, api.Config{Config: core.Config{TenantRate: 1, TenantBurst: 1, TenantMaxSessions: 1}})
	id := f.create(t, `{"language":"python"}`)
	f.clock.Advance(time.Second)
	rec := f.do(t, http.MethodPost, "/v1/sessions", `{"language":"python"}`)
	checkResponse(t, rec, http.StatusTooManyRequests, `{"code":"too_many_sessions","message":"you hold 1 sessions, `+
		`the most one tenant may; delete one (or let one expire) and retry"}`+"\n")
	rec = f.do(t, http.MethodGet, "/v1/sessions/"+id, "")
	if rec.Code != http.StatusTooManyRequests {
		t.Errorf("second request in the same second: %d, want 429", rec.Code)
	}
	checkHeaders(t, rec, map[string]string{"Retry-After": "1", "RateLimit-Limit": "1", "RateLimit-Remaining": "0", "RateLimit-Reset": "1"})
}

// Concurrent creations see each other: the cap holds under a burst.
func TestTenantSessionLimitConcurrent(t *testing.T) {
	f := newSessionFixture(t, &runnertest.Runtime{StartDelay: 5 * time.Millisecond}, kernels.Config{},
		api.Config{Config: core.Config{TenantMaxSessions: 3, TenantRate: -1}})
	codes := make(chan int, 10)
	for range 10 {
		go func() {
			req := httptest.NewRequest(http.MethodPost, "/v1/sessions", strings.NewReader(`{"language":"python"}`))
			rec := httptest.NewRecorder()
			f.h.ServeHTTP(rec, req)
			codes <- rec.Code
		}()
	}
	count := map[int]int{}
	for range 10 {
		count[<-codes]++
	}
	if count[http.StatusCreated] != 3 || count[http.StatusTooManyRequests] != 7 {
		t.Errorf("statuses = %v, want 3 × 201 and 7 × 429", count)
	}
}
