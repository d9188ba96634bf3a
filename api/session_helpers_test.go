package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/api"
	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// t0 is the fake clock's start.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// sessionFixture is the API over real pool and kernels managers over the
// fake runtime, with a fake clock.
type sessionFixture struct {
	*fixture
	kernels *kernels.Manager
	clock   *clock
}

// newSessionFixture builds pool (python and node, no warm sandboxes, so
// sandbox ids count from fake-0001 in creation order), kernels and API.
func newSessionFixture(t *testing.T, rt *runnertest.Runtime, kcfg kernels.Config, acfg api.Config) *sessionFixture {
	t.Helper()
	p, err := pool.New(rt, pool.Config{Templates: []pool.Template{
		{Name: "python", Spec: runner.Spec{Language: "python"}},
		{Name: "node", Spec: runner.Spec{Language: "node"}},
	}}, nil)
	if err != nil {
		t.Fatalf("pool.New: %v", err)
	}
	p.Start()
	c := &clock{now: t0}
	kcfg.Now = c.Now
	km, err := kernels.New(p, kcfg, nil)
	if err != nil {
		t.Fatalf("kernels.New: %v", err)
	}
	km.Start()
	t.Cleanup(func() { // kernels first: the pool waits for their sandboxes
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := km.Close(ctx); err != nil {
			t.Errorf("kernels Close: %v", err)
		}
		if err := p.Close(ctx); err != nil {
			t.Errorf("pool Close: %v", err)
		}
		if live := rt.Live(); live != 0 {
			t.Errorf("Live after Close = %d, want 0", live)
		}
	})
	acfg.Pool, acfg.Kernels = p, km
	if acfg.Now == nil {
		acfg.Now = c.Now
	}
	if acfg.Templates == nil {
		acfg.Templates = testTemplates
	}
	return &sessionFixture{fixture: &fixture{h: api.New(acfg), rt: rt, pool: p}, kernels: km, clock: c}
}

// create makes a session through the API and returns its id.
func (f *sessionFixture) create(t *testing.T, body string) string {
	t.Helper()
	rec := f.do(t, http.MethodPost, "/v1/sessions", body)
	if rec.Code != http.StatusCreated {
		t.Fatalf("create: status %d, body %s", rec.Code, rec.Body)
	}
	m := regexp.MustCompile(`"id":"([0-9a-f]{32})"`).FindStringSubmatch(rec.Body.String())
	if m == nil {
		t.Fatalf("create: no id in %s", rec.Body)
	}
	return m[1]
}

// kernel returns the fake kernel of the n-th sandbox started (from 1).
func (f *sessionFixture) kernel(t *testing.T, n int) *runnertest.Kernel {
	t.Helper()
	sbs := f.rt.Sandboxes()
	if len(sbs) < n || sbs[n-1].Kernel() == nil {
		t.Fatalf("sandbox %d has no kernel", n)
	}
	return sbs[n-1].Kernel()
}

// doWith serves one request with extra headers.
func (f *sessionFixture) doWith(t *testing.T, method, target, body string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), method, target, strings.NewReader(body))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	return rec
}

var (
	totalMS = regexp.MustCompile(`"total_ms":[0-9.e+-]+`)
	queueMS = regexp.MustCompile(`"queue_ms":[0-9.e+-]+`)
)

// fixTiming replaces the measured total_ms with T and queue_ms with Q.
func fixTiming(s string) string {
	return queueMS.ReplaceAllString(totalMS.ReplaceAllString(s, `"total_ms":T`), `"queue_ms":Q`)
}
