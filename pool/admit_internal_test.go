package pool

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// labelKey carries a request's label into the fake runtime's Start.
type labelKey struct{}

// gatedStarts is a fake runtime whose starts each report their label on
// began (a request's label, or "refill <template>" for a pool refill)
// and then wait for one value on release.
type gatedStarts struct {
	rt      *runnertest.Runtime
	began   chan string
	release chan struct{}
}

func newGatedStarts() *gatedStarts {
	g := &gatedStarts{rt: &runnertest.Runtime{}, began: make(chan string, 16), release: make(chan struct{})}
	g.rt.StartFunc = func(ctx context.Context, spec runner.Spec) (runner.Sandbox, error) {
		label, ok := ctx.Value(labelKey{}).(string)
		if !ok {
			label = "refill " + spec.Template
		}
		g.began <- label
		select {
		case <-g.release:
			return g.rt.NewSandbox(spec), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return g
}

// next waits for the next start to begin and returns its label.
func (g *gatedStarts) next(t *testing.T) string {
	t.Helper()
	select {
	case l := <-g.began:
		return l
	case <-time.After(time.Minute): // a safety net, not a speed
		t.Fatal("no start began within a minute")
		return ""
	}
}

func newGatedManager(t *testing.T, g *gatedStarts, cfg Config) *Manager {
	t.Helper()
	m, err := New(g.rt, cfg, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	m.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return m
}

func warmTmpl(name string, size int) Template {
	return Template{Name: name, Spec: runner.Spec{Language: "python", Warmup: "import os"}, Size: size}
}

// acquireAsync leases a sandbox of template for tenant in the background,
// labelling its start, and releases it at cleanup.
func acquireAsync(t *testing.T, m *Manager, template, tenant, label string) {
	ctx := context.WithValue(context.Background(), labelKey{}, label)
	done := make(chan struct{})
	go func() {
		defer close(done)
		lease, err := m.AcquireWith(ctx, template, RunOptions{Tenant: tenant})
		if err != nil {
			if !errors.Is(err, ErrClosed) {
				t.Errorf("%s: %v", label, err)
			}
			return
		}
		m.Release(lease.Sandbox)
	}()
	t.Cleanup(func() { <-done })
}

// until polls cond (under m.mu) until it holds; the minute is a safety net.
func until(t *testing.T, m *Manager, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		m.mu.Lock()
		ok := cond()
		m.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// A request waiting for a start slot gets it before a refill that has
// waited longer.
func TestRequestsStartBeforeRefills(t *testing.T) {
	g := newGatedStarts()
	m := newGatedManager(t, g, Config{Templates: []Template{warmTmpl("python", 2), warmTmpl("node", 0)}, StartBudget: 1})

	if got := g.next(t); got != "refill python" {
		t.Fatalf("first start = %q, want the python refill", got)
	}
	acquireAsync(t, m, "node", "a", "r1")
	until(t, m, "r1 queued", func() bool { return m.queue.len() == 1 })
	g.release <- struct{}{}
	if got := g.next(t); got != "r1" {
		t.Fatalf("second start = %q, want r1", got)
	}
	until(t, m, "the next refill waiting", func() bool { return len(m.refillWait) == 1 })
	acquireAsync(t, m, "node", "a", "r2")
	until(t, m, "r2 queued", func() bool { return m.queue.len() == 1 })

	g.release <- struct{}{} // r1's start ends: r2 and the refill both want the slot
	if got := g.next(t); got != "r2" {
		t.Fatalf("third start = %q, want r2 (requests before refills)", got)
	}
	g.release <- struct{}{}
	if got := g.next(t); got != "refill python" {
		t.Fatalf("fourth start = %q, want the python refill once no request waits", got)
	}
	g.release <- struct{}{}
}

// Waiting requests are served in turn across tenants: tenant b's one
// request does not wait behind all of tenant a's.
func TestWaitingRequestsTakeTurnsAcrossTenants(t *testing.T) {
	g := newGatedStarts()
	m := newGatedManager(t, g, Config{Templates: []Template{warmTmpl("python", 0)}, StartBudget: 1})

	acquireAsync(t, m, "python", "x", "x1")
	if got := g.next(t); got != "x1" {
		t.Fatalf("first start = %q, want x1", got)
	}
	for i, label := range []string{"a1", "a2", "a3"} {
		acquireAsync(t, m, "python", "a", label)
		until(t, m, label+" queued", func() bool { return m.queue.len() == i+1 })
	}
	acquireAsync(t, m, "python", "b", "b1")
	until(t, m, "b1 queued", func() bool { return m.queue.len() == 4 })

	for _, want := range []string{"a1", "b1", "a2", "a3"} {
		g.release <- struct{}{}
		if got := g.next(t); got != want {
			t.Fatalf("start = %q, want %q (order a1 b1 a2 a3)", got, want)
		}
	}
	g.release <- struct{}{}
}

// A request that gets no sandbox within QueueDeadline fails with
// ErrSaturated and a retry delay from the service rate, and leaves the
// queue.
func TestQueueDeadlineSaturated(t *testing.T) {
	g := newGatedStarts()
	const deadline = 50 * time.Millisecond
	m := newGatedManager(t, g, Config{Templates: []Template{warmTmpl("python", 0)}, StartBudget: 1, QueueDeadline: deadline})

	acquireAsync(t, m, "python", "x", "x1")
	if got := g.next(t); got != "x1" {
		t.Fatalf("first start = %q, want x1", got)
	}
	// A minute is a safety net: without the deadline this would hang.
	ctx, cancel := context.WithTimeout(context.WithValue(t.Context(), labelKey{}, "a1"), time.Minute)
	defer cancel()
	_, err := m.AcquireWith(ctx, "python", RunOptions{Tenant: "a"})
	var sat *SaturatedError
	if !errors.As(err, &sat) || !errors.Is(err, ErrSaturated) {
		t.Fatalf("Acquire error = %v, want a SaturatedError", err)
	}
	// One request served in the 10 s rate window: 0.1/s, 10 s for the
	// next one.
	if sat.RetryAfter != 10*time.Second || sat.Waited < deadline || sat.Template != "python" {
		t.Errorf("SaturatedError = %+v, want RetryAfter 10s, Waited ≥ %v, Template python", *sat, deadline)
	}
	m.mu.Lock()
	n := m.queue.len()
	m.mu.Unlock()
	if n != 0 {
		t.Errorf("queue length after the deadline = %d, want 0", n)
	}
	g.release <- struct{}{}
}

// The Retry-After grows with the queue and shrinks with the service rate.
func TestRetryAfterFollowsServiceRate(t *testing.T) {
	now := time.Unix(1000, 0)
	m := &Manager{now: func() time.Time { return now }}
	for range 20 { // 20 served at once: 2/s over the 10 s window
		m.served.add(now)
	}
	for range 5 {
		m.queue.push(&ticket{tenant: "a"})
	}
	if got := m.retryAfterLocked(); got != 3*time.Second { // (5+1) / 2/s
		t.Errorf("retryAfter = %v, want 3s", got)
	}
	m.served = serveRate{}
	if got := m.retryAfterLocked(); got != maxRetryAfter {
		t.Errorf("retryAfter with nothing served = %v, want %v", got, maxRetryAfter)
	}
}

// Refills never hold every start slot, even when MaxRefills allows it:
// the last one stays a request's.
func TestRefillsLeaveTheLastSlot(t *testing.T) {
	g := newGatedStarts()
	m := newGatedManager(t, g, Config{
		Templates:   []Template{warmTmpl("python", 1), warmTmpl("node", 1), warmTmpl("ruby", 0)},
		StartBudget: 2, MaxRefills: 2,
	})
	first := g.next(t)
	if first != "refill python" && first != "refill node" {
		t.Fatalf("first start = %q, want a refill", first)
	}
	until(t, m, "the other refill waiting or started", func() bool { return len(m.refillWait) == 1 || len(g.began) > 0 })
	if len(g.began) > 0 {
		t.Fatalf("a second refill took the last start slot")
	}
	acquireAsync(t, m, "ruby", "a", "r1")
	if got := g.next(t); got != "r1" {
		t.Fatalf("second start = %q, want r1 at once", got)
	}
	for range 3 {
		g.release <- struct{}{}
	}
}
