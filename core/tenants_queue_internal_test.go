package core

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func queueTenants(maxRuns, queue int) *tenants {
	return newTenants(Config{Now: time.Now, TenantMaxRuns: maxRuns, TenantRunQueue: queue})
}

// waiters is how many of name's runs wait for a slot.
func (ts *tenants) waiters(name string) int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t, ok := ts.m[name]; ok {
		return len(t.waiting)
	}
	return 0
}

func (ts *tenants) inFlight(name string) int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t, ok := ts.m[name]; ok {
		return t.runs
	}
	return 0
}

type started struct {
	done func()
	err  error
}

// startAsync starts a run of name in the background and returns once it
// holds a slot or waits for one.
func startAsync(t *testing.T, ts *tenants, ctx context.Context, name string, deadline time.Time) <-chan started {
	t.Helper()
	before := ts.waiters(name)
	ch := make(chan started, 1)
	go func() {
		done, _, err := ts.startRun(ctx, name, deadline)
		ch <- started{done, err}
	}()
	for ts.waiters(name) == before {
		select {
		case s := <-ch:
			ch <- s
			return ch
		default:
			time.Sleep(time.Millisecond)
		}
	}
	return ch
}

func get(t *testing.T, ch <-chan started) started {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(time.Minute): // a safety net only
		t.Fatal("no answer after a minute")
		return started{}
	}
}

// At the limit, a tenant's runs wait in arrival order and each finishing
// run hands its slot to the oldest; past the queue's length a run is
// refused at once, saying how many wait.
func TestRunQueueFirstComeFirstServed(t *testing.T) {
	ts := queueTenants(1, 2)
	far := time.Now().Add(time.Hour)
	first, _, err := ts.startRun(t.Context(), "alice", far)
	if err != nil {
		t.Fatal(err)
	}
	second := startAsync(t, ts, t.Context(), "alice", far)
	third := startAsync(t, ts, t.Context(), "alice", far)
	if n := ts.waiters("alice"); n != 2 {
		t.Fatalf("%d waiting, want 2", n)
	}
	_, _, err = ts.startRun(t.Context(), "alice", far)
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrTooManyRuns) || e.RetryAfter != time.Second ||
		!strings.Contains(e.Message, "and 2 more waiting") {
		t.Fatalf("a run beyond the queue: %v, want too_many_runs saying 2 wait", err)
	}
	if done, _, err := ts.startRun(t.Context(), "bob", far); err != nil {
		t.Errorf("another tenant's run: %v", err)
	} else {
		done()
	}

	first()
	s := get(t, second)
	if s.err != nil {
		t.Fatalf("the oldest waiting run: %v", s.err)
	}
	select {
	case <-third:
		t.Fatal("the newer waiting run got the slot too")
	default:
	}
	if n := ts.inFlight("alice"); n != 1 {
		t.Errorf("%d in flight after a hand-over, want 1", n)
	}
	s.done()
	s.done() // twice is harmless
	s = get(t, third)
	if s.err != nil {
		t.Fatalf("the newer waiting run: %v", s.err)
	}
	s.done()
	if n, w, all := ts.inFlight("alice"), ts.waiters("alice"), ts.waitingRuns(); n != 0 || w != 0 || all != 0 {
		t.Errorf("%d in flight and %d waiting (%d counted) at the end, want none", n, w, all)
	}
}

// A waiting run is refused when its deadline passes, and one whose
// caller goes away stops waiting; neither keeps a place, and the slot
// later freed is not handed to either.
func TestRunQueueDeadlineAndCancel(t *testing.T) {
	ts := queueTenants(1, 4)
	holder, _, err := ts.startRun(t.Context(), "alice", time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	_, waited, err := ts.startRun(t.Context(), "alice", time.Now().Add(20*time.Millisecond))
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrTooManyRuns) || !strings.Contains(e.Message, "waited") || waited <= 0 {
		t.Fatalf("a run past its deadline: %v (waited %s), want too_many_runs saying it waited", err, waited)
	}

	ctx, cancel := context.WithCancel(t.Context())
	gone := startAsync(t, ts, ctx, "alice", time.Now().Add(time.Hour))
	cancel()
	if s := get(t, gone); !errors.Is(s.err, context.Canceled) {
		t.Fatalf("a cancelled waiting run: %v, want context.Canceled", s.err)
	}
	if w, all := ts.waiters("alice"), ts.waitingRuns(); w != 0 || all != 0 {
		t.Fatalf("%d still waiting (%d counted) after the deadline and the cancel, want 0", w, all)
	}
	holder()
	if n := ts.inFlight("alice"); n != 0 {
		t.Errorf("%d in flight after the holder finished, want 0", n)
	}
}

// Without a queue a run at the limit is refused at once, as before.
func TestRunQueueOff(t *testing.T) {
	ts := queueTenants(1, -1)
	holder, _, err := ts.startRun(t.Context(), "alice", time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer holder()
	_, waited, err := ts.startRun(t.Context(), "alice", time.Now().Add(time.Hour))
	var e *Error
	if !errors.As(err, &e) || e.Message != "you have 1 runs in flight, the most one tenant may; retry when one finishes" || waited != 0 {
		t.Fatalf("a run at the limit with no queue: %v (waited %s)", err, waited)
	}
}
