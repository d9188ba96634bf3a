package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"github.com/paddock-dev/paddock/core"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/api"
	"github.com/paddock-dev/paddock/api/jobs"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

func openJobs(t *testing.T, dir string) *jobs.Store {
	t.Helper()
	s, _, err := jobs.Open(jobs.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// keyed serves POST /v1/run with body, the Idempotency-Key values given
// (none when nil) and a bearer token (none when empty).
func keyed(t *testing.T, h http.Handler, body string, keys []string, token string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/v1/run", strings.NewReader(body))
	for _, k := range keys {
		req.Header.Add("Idempotency-Key", k)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// countingRuntime echoes the code like the default fake, counting runs.
func countingRuntime(runs *atomic.Int32) *runnertest.Runtime {
	return &runnertest.Runtime{RunFunc: func(_ context.Context, req runner.RunRequest, _ runner.OutputFunc) (runner.RunResult, error) {
		runs.Add(1)
		return runner.RunResult{Stdout: []byte(req.Code), Reason: runner.ReasonOK}, nil
	}}
}

func TestIdempotentReplay(t *testing.T) {
	var runs atomic.Int32
	store := openJobs(t, t.TempDir())
	f := newFixture(t, countingRuntime(&runs), pool.Config{}, api.Config{Jobs: store}, true)
	body := `{"language":"python","code":"print('<1>')"}`

	first := keyed(t, f.h, body, []string{"order-42"}, "")
	if first.Code != http.StatusOK || first.Header().Get("Idempotent-Replayed") != "" {
		t.Fatalf("first: HTTP %d, Idempotent-Replayed %q, body %s", first.Code, first.Header().Get("Idempotent-Replayed"), first.Body)
	}
	if !strings.HasPrefix(first.Body.String(), `{"stdout":"print('<1>')","stderr":"","exit_code":0,"reason":"ok",`) ||
		!strings.Contains(first.Body.String(), `"sandbox_id":"fake-0001"`) {
		t.Fatalf("first body %s", first.Body)
	}
	for range 2 {
		again := keyed(t, f.h, body, []string{"order-42"}, "")
		checkResponse(t, again, http.StatusOK, first.Body.String())
		if got := again.Header().Get("Idempotent-Replayed"); got != "true" {
			t.Errorf("Idempotent-Replayed = %q, want true", got)
		}
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("%d runs, want 1", n)
	}

	// The same key with another body is refused; the stored job stays.
	other := keyed(t, f.h, `{"language":"python","code":"print(2)"}`, []string{"order-42"}, "")
	checkResponse(t, other, http.StatusUnprocessableEntity, `{"code":"idempotency_key_reused",`+
		`"message":"this Idempotency-Key was sent with a different request body; use a new key for a new request"}`+"\n")
	// Same JSON, other bytes: a different body.
	spaced := keyed(t, f.h, `{"language": "python","code":"print('<1>')"}`, []string{"order-42"}, "")
	if spaced.Code != http.StatusUnprocessableEntity {
		t.Errorf("reformatted body: HTTP %d, want 422", spaced.Code)
	}
	// Without a key every request runs.
	f.do(t, http.MethodPost, "/v1/run", body)
	f.do(t, http.MethodPost, "/v1/run", body)
	if n := runs.Load(); n != 3 {
		t.Errorf("%d runs, want 3", n)
	}
}

// blockingRuntime's runs wait for release, announcing themselves on
// started.
func blockingRuntime(runs *atomic.Int32, started chan<- struct{}, release <-chan struct{}) *runnertest.Runtime {
	return &runnertest.Runtime{RunFunc: func(ctx context.Context, req runner.RunRequest, _ runner.OutputFunc) (runner.RunResult, error) {
		runs.Add(1)
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
			return runner.RunResult{}, ctx.Err()
		}
		return runner.RunResult{Stdout: []byte("slept\n"), Reason: runner.ReasonOK}, nil
	}}
}

func TestIdempotentInProgress(t *testing.T) {
	var runs atomic.Int32
	started, release := make(chan struct{}, 1), make(chan struct{})
	f := newFixture(t, blockingRuntime(&runs, started, release), pool.Config{}, api.Config{Jobs: openJobs(t, t.TempDir())}, true)
	body := `{"language":"python","code":"import time; time.sleep(30)"}`

	first := make(chan *httptest.ResponseRecorder, 1)
	go func() { first <- keyed(t, f.h, body, []string{"k"}, "") }()
	<-started

	// Concurrent retries while it runs: all 409, none runs.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			rec := keyed(t, f.h, body, []string{"k"}, "")
			checkResponse(t, rec, http.StatusConflict, `{"code":"in_progress",`+
				`"message":"the run with this Idempotency-Key is still in flight; retry after it ends to get its result"}`+"\n")
			if got := rec.Header().Get("Retry-After"); got != "1" {
				t.Errorf("Retry-After = %q, want 1", got)
			}
		})
	}
	wg.Wait()
	// Another body is refused as such even while the first runs.
	if rec := keyed(t, f.h, `{"language":"python","code":"1"}`, []string{"k"}, ""); rec.Code != http.StatusUnprocessableEntity {
		t.Errorf("another body while running: HTTP %d, want 422", rec.Code)
	}

	close(release)
	rec := <-first
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Body.String(), `{"stdout":"slept\n",`) {
		t.Fatalf("first: HTTP %d %s", rec.Code, rec.Body)
	}
	replay := keyed(t, f.h, body, []string{"k"}, "")
	checkResponse(t, replay, http.StatusOK, rec.Body.String())
	if n := runs.Load(); n != 1 {
		t.Errorf("%d runs, want 1", n)
	}
}

// TestIdempotentConcurrentFirst: many first requests with one key at
// once; exactly one runs, the others answer 409.
func TestIdempotentConcurrentFirst(t *testing.T) {
	var runs atomic.Int32
	started, release := make(chan struct{}, 16), make(chan struct{})
	f := newFixture(t, blockingRuntime(&runs, started, release), pool.Config{}, api.Config{Jobs: openJobs(t, t.TempDir()), Config: core.Config{TenantMaxRuns: 16}}, true)
	const n = 12
	codes := make(chan int, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { codes <- keyed(t, f.h, `{"language":"python","code":"x"}`, []string{"same"}, "").Code })
	}
	<-started
	// Every loser answers without waiting for the winner.
	for range n - 1 {
		if c := <-codes; c != http.StatusConflict {
			t.Errorf("a concurrent first request: HTTP %d, want 409", c)
		}
	}
	close(release)
	wg.Wait()
	if c := <-codes; c != http.StatusOK {
		t.Errorf("the winner: HTTP %d, want 200", c)
	}
	if got := runs.Load(); got != 1 {
		t.Errorf("%d runs, want 1", got)
	}
}

// TestIdempotentInterrupted: a job the previous process left running
// answers as interrupted after the store is reopened.
func TestIdempotentInterrupted(t *testing.T) {
	dir := t.TempDir()
	body := `{"language":"python","code":"import time; time.sleep(30)"}`
	sum := sha256.Sum256([]byte(body))
	crashed := openJobs(t, dir)
	if _, err := crashed.Begin("", "k", hex.EncodeToString(sum[:])); err != nil {
		t.Fatal(err)
	}
	// The process dies here; the next one opens the same directory.
	var runs atomic.Int32
	f := newFixture(t, countingRuntime(&runs), pool.Config{}, api.Config{Jobs: openJobs(t, dir)}, true)

	for range 2 {
		rec := keyed(t, f.h, body, []string{"k"}, "")
		checkResponse(t, rec, http.StatusOK, `{"stdout":"","stderr":"","exit_code":137,"reason":"interrupted",`+
			`"stdout_truncated":false,"stderr_truncated":false,"warm":false,"start":"","sandbox_id":"",`+
			`"timing":{"queue_ms":0,"acquire_ms":0,"start_ms":0,"exec_ms":0,"total_ms":0}}`+"\n")
		if got := rec.Header().Get("Idempotent-Replayed"); got != "true" {
			t.Errorf("Idempotent-Replayed = %q, want true", got)
		}
	}
	if rec := keyed(t, f.h, `{"language":"python","code":"1"}`, []string{"k"}, ""); rec.Code != http.StatusUnprocessableEntity {
		t.Errorf("another body: HTTP %d, want 422", rec.Code)
	}
	if n := runs.Load(); n != 0 {
		t.Errorf("%d runs, want none", n)
	}
}

func TestIdempotencyKeyInvalid(t *testing.T) {
	tests := []struct {
		name    string
		keys    []string
		message string
	}{
		{"empty", []string{""}, "Idempotency-Key must have 1 to 128 characters, got 0"},
		{"too long", []string{strings.Repeat("k", 129)}, "Idempotency-Key must have 1 to 128 characters, got 129"},
		{"not ASCII", []string{"clé"}, "Idempotency-Key must be printable ASCII; byte 2 is 0xc3"},
		{"control", []string{"a\x01b"}, "Idempotency-Key must be printable ASCII; byte 1 is 0x01"},
		{"DEL", []string{"a\x7f"}, "Idempotency-Key must be printable ASCII; byte 1 is 0x7f"},
		{"two", []string{"a", "b"}, "send one Idempotency-Key header, not 2"},
	}
	var runs atomic.Int32
	store := openJobs(t, t.TempDir())
	f := newFixture(t, countingRuntime(&runs), pool.Config{}, api.Config{Jobs: store}, true)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := keyed(t, f.h, `{"language":"python","code":"x"}`, tc.keys, "")
			checkResponse(t, rec, http.StatusBadRequest, `{"code":"invalid_idempotency_key","message":`+jsonString(t, tc.message)+"}\n")
		})
	}
	// The longest key, and every printable character, are fine.
	for _, k := range []string{strings.Repeat("k", 128), " !\"#$%&'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~"} {
		if rec := keyed(t, f.h, `{"language":"python","code":"x"}`, []string{k}, ""); rec.Code != http.StatusOK {
			t.Errorf("key %q: HTTP %d %s", k, rec.Code, rec.Body)
		}
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("%d runs, want 2", n)
	}
}

// TestIdempotentFailuresAreNotStored: a request refused before it runs,
// and a run Paddock failed, leave the key free for a retry.
func TestIdempotentFailuresAreNotStored(t *testing.T) {
	var runs atomic.Int32
	fail := atomic.Bool{}
	fail.Store(true)
	rt := &runnertest.Runtime{RunFunc: func(_ context.Context, req runner.RunRequest, _ runner.OutputFunc) (runner.RunResult, error) {
		runs.Add(1)
		if fail.Load() {
			return runner.RunResult{}, errors.New("runsc exploded")
		}
		return runner.RunResult{Stdout: []byte("ok"), Reason: runner.ReasonOK}, nil
	}}
	store := openJobs(t, t.TempDir())
	f := newFixture(t, rt, pool.Config{}, api.Config{Jobs: store}, true)

	if rec := keyed(t, f.h, `{"language":"cobol","code":"x"}`, []string{"k"}, ""); rec.Code != http.StatusBadRequest {
		t.Errorf("invalid request: HTTP %d, want 400", rec.Code)
	}
	if n := store.Len(); n != 0 {
		t.Errorf("%d jobs after a 400, want 0", n)
	}
	body := `{"language":"python","code":"x"}`
	if rec := keyed(t, f.h, body, []string{"k"}, ""); rec.Code != http.StatusInternalServerError {
		t.Errorf("failed run: HTTP %d, want 500", rec.Code)
	}
	waitFor(t, "job forgotten", func() bool { return store.Len() == 0 })
	fail.Store(false)
	rec := keyed(t, f.h, body, []string{"k"}, "")
	if rec.Code != http.StatusOK || rec.Header().Get("Idempotent-Replayed") != "" {
		t.Errorf("retry after the failure: HTTP %d, replayed %q; want a fresh 200", rec.Code, rec.Header().Get("Idempotent-Replayed"))
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("%d runs, want 2", n)
	}
}

func TestIdempotentClientGoneForgets(t *testing.T) {
	var runs atomic.Int32
	started, release := make(chan struct{}, 2), make(chan struct{})
	defer close(release)
	store := openJobs(t, t.TempDir())
	f := newFixture(t, blockingRuntime(&runs, started, release), pool.Config{}, api.Config{Jobs: store}, true)
	ctx, cancel := context.WithCancel(t.Context())
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/run", strings.NewReader(`{"language":"python","code":"x"}`))
	req.Header.Set("Idempotency-Key", "k")
	go func() {
		<-started
		cancel()
	}()
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	if rec.Code != 499 {
		t.Errorf("status %d, want 499", rec.Code)
	}
	if n := store.Len(); n != 0 {
		t.Errorf("%d jobs after the client left, want 0", n)
	}
}

// TestIdempotencyKeysAreTenants: two tenants may use one key for
// different requests.
func TestIdempotencyKeysAreTenants(t *testing.T) {
	var runs atomic.Int32
	now := time.Now()
	f := newFixture(t, countingRuntime(&runs), pool.Config{}, api.Config{Jobs: openJobs(t, t.TempDir()), Config: core.Config{Auth: api.Auth{HS256Secret: testSecret}}}, true)
	alice, bob := hs256(t, now, "alice", "run"), hs256(t, now, "bob", "run")
	a := keyed(t, f.h, `{"language":"python","code":"alice"}`, []string{"k"}, alice)
	b := keyed(t, f.h, `{"language":"python","code":"bob"}`, []string{"k"}, bob)
	if a.Code != http.StatusOK || b.Code != http.StatusOK || b.Header().Get("Idempotent-Replayed") != "" {
		t.Fatalf("alice HTTP %d, bob HTTP %d (replayed %q)", a.Code, b.Code, b.Header().Get("Idempotent-Replayed"))
	}
	if rec := keyed(t, f.h, `{"language":"python","code":"bob"}`, []string{"k"}, bob); !strings.HasPrefix(rec.Body.String(), `{"stdout":"bob",`) {
		t.Errorf("bob's replay: %s", rec.Body)
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("%d runs, want 2", n)
	}
}

func TestIdempotencyKeyWithoutStore(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, pool.Config{}, api.Config{}, true)
	rec := keyed(t, f.h, `{"language":"python","code":"x"}`, []string{"k"}, "")
	checkResponse(t, rec, http.StatusNotImplemented, `{"code":"not_implemented","message":"this server does not keep idempotent runs"}`+"\n")
}

// brokenJobs fails every claim as a broken database would.
type brokenJobs struct{}

func (brokenJobs) Begin(string, string, string) (jobs.Job, error) {
	return jobs.Job{}, errors.New("SQL logic error: no such table: jobs (1)")
}
func (brokenJobs) Finish(jobs.Job, json.RawMessage) error { return nil }
func (brokenJobs) Forget(jobs.Job) error                  { return nil }

// A key the job store cannot claim runs nothing and answers 503 with its
// own code, never a 500.
func TestIdempotentStoreFailure(t *testing.T) {
	var runs atomic.Int32
	f := newFixture(t, countingRuntime(&runs), pool.Config{}, api.Config{Jobs: brokenJobs{}}, true)
	rec := keyed(t, f.h, `{"language":"python","code":"x"}`, []string{"k"}, "")
	checkResponse(t, rec, http.StatusServiceUnavailable, `{"code":"jobs_unavailable","message":"the store of idempotent runs did not answer, so nothing ran; retry shortly, or send the run without an Idempotency-Key"}`+"\n")
	if rec.Header().Get("Retry-After") != "5" || runs.Load() != 0 {
		t.Errorf("Retry-After %q, %d runs", rec.Header().Get("Retry-After"), runs.Load())
	}
}
