package pool

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// sharedImage is a snapshot ability whose one image another server also
// restores from: Drop leaves it in place, and Snapshot finds it again.
type sharedImage struct {
	*runnertest.Runtime

	mu       sync.Mutex
	failNext int // restores still to fail
	finds    int
	drops    int
}

func (r *sharedImage) Snapshot(_ context.Context, spec runner.Spec) (runner.Snapshot, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.finds++
	return runner.Snapshot{Key: "k", Path: "/images/python", Spec: spec, Built: r.finds == 1}, nil
}

func (r *sharedImage) Restore(_ context.Context, img runner.Snapshot) (runner.Sandbox, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failNext > 0 {
		r.failNext--
		return nil, errors.New("restore: timed out waiting for the agent")
	}
	return r.NewSandbox(img.Spec), nil
}

func (r *sharedImage) Drop(img runner.Snapshot) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.drops++
	return fmt.Errorf("dropping %s: %w", img.Path, runner.ErrSnapshotInUse)
}

func (r *sharedImage) fail(n int) {
	r.mu.Lock()
	r.failNext = n
	r.mu.Unlock()
}

// A failed restore whose image another server keeps using is not followed
// at once by restores from that same image: the pool cold-starts for a
// pause that grows with the failures in a row, then tries the image again.
// A restore that works resets the count.
func TestSnapshotKeptByAnotherServerPausesRestores(t *testing.T) {
	rt := &sharedImage{Runtime: &runnertest.Runtime{}}
	m, err := New(rt, Config{Templates: []Template{{Name: "python", Snapshot: true}}}, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	var (
		mu     sync.Mutex
		delays []time.Duration
		paused = make(chan struct{})
		resume = make(chan struct{})
	)
	m.wait = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		delays = append(delays, d)
		mu.Unlock()
		paused <- struct{}{}
		select {
		case <-resume:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	m.Start()
	defer func() {
		if err := m.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	snap := func() snapState {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.pools["python"].snap
	}
	untilReady := func() {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); snap() != snapReady; time.Sleep(time.Millisecond) { // a safety net only
			if time.Now().After(deadline) {
				t.Fatalf("snapshot %s after a minute, want ready", snap())
			}
		}
	}
	kind := func() StartKind {
		t.Helper()
		lease, err := m.Acquire(t.Context(), "python")
		if err != nil {
			t.Fatalf("Acquire: %v", err)
		}
		m.Release(lease.Sandbox)
		return lease.Kind
	}

	pause := func() {
		t.Helper()
		select {
		case <-paused:
		case <-time.After(time.Minute): // a safety net only
			t.Fatalf("no pause before restoring from the kept image again (snapshot %s)", snap())
		}
	}

	untilReady()
	rt.fail(2)
	for round := range 2 {
		if k := kind(); k != StartCold {
			t.Fatalf("round %d: Acquire as the restore fails: %s, want a cold fallback", round, k)
		}
		pause()
		if s := snap(); s == snapReady {
			t.Fatalf("round %d: the kept image is ready again during the pause", round)
		}
		if k := kind(); k != StartCold {
			t.Fatalf("round %d: Acquire during the pause: %s, want cold", round, k)
		}
		resume <- struct{}{}
		untilReady()
	}
	if k := kind(); k != StartRestore {
		t.Fatalf("Acquire after the pauses: %s, want a restore from the kept image", k)
	}
	rt.fail(1)
	if k := kind(); k != StartCold {
		t.Fatalf("Acquire as the restore fails after a good one: %s, want cold", k)
	}
	pause()
	resume <- struct{}{}
	untilReady()

	mu.Lock()
	defer mu.Unlock()
	want := []time.Duration{snapBackoffMin, 2 * snapBackoffMin, snapBackoffMin}
	if !slices.Equal(delays, want) {
		t.Errorf("pauses = %v, want %v (growing in a row, reset by a restore that worked)", delays, want)
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.drops != 3 {
		t.Errorf("drops = %d, want one per failed restore (3)", rt.drops)
	}
}
