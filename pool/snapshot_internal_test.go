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

// oneImage is a snapshot ability with one image, whose restores fail on
// demand. Drop fails with dropErr when set (another server keeps the
// image), else removes the image so that the next Snapshot builds anew.
type oneImage struct {
	*runnertest.Runtime

	mu         sync.Mutex
	failNext   int   // restores still to fail
	restoreErr error // how they fail
	dropErr    error
	dropped    bool
	finds      int
	drops      int
}

func (r *oneImage) Snapshot(_ context.Context, spec runner.Spec) (runner.Snapshot, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.finds++
	built := r.finds == 1 || r.dropped
	r.dropped = false
	return runner.Snapshot{Key: "k", Path: "/images/python", Spec: spec, Built: built}, nil
}

func (r *oneImage) Restore(_ context.Context, img runner.Snapshot) (runner.Sandbox, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failNext > 0 {
		r.failNext--
		return nil, r.restoreErr
	}
	return r.NewSandbox(img.Spec), nil
}

func (r *oneImage) Drop(img runner.Snapshot) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.drops++
	if r.dropErr != nil {
		return fmt.Errorf("dropping %s: %w", img.Path, r.dropErr)
	}
	r.dropped = true
	return nil
}

func (r *oneImage) fail(n int) {
	r.mu.Lock()
	r.failNext = n
	r.mu.Unlock()
}

func (r *oneImage) dropCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.drops
}

// pauses runs a one-template snapshotted manager over rt whose waits are
// held until the test resumes them, and records their lengths.
type pauses struct {
	t      *testing.T
	m      *Manager
	mu     sync.Mutex
	delays []time.Duration
	paused chan struct{}
	resume chan struct{}
}

func newPauses(t *testing.T, rt runner.Runtime) *pauses {
	t.Helper()
	m, err := New(rt, Config{Templates: []Template{{Name: "python", Snapshot: true}}}, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	p := &pauses{t: t, m: m, paused: make(chan struct{}), resume: make(chan struct{})}
	m.wait = func(ctx context.Context, d time.Duration) error {
		p.mu.Lock()
		p.delays = append(p.delays, d)
		p.mu.Unlock()
		p.paused <- struct{}{}
		select {
		case <-p.resume:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	m.Start()
	t.Cleanup(func() {
		if err := m.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return p
}

func (p *pauses) snap() snapState {
	p.m.mu.Lock()
	defer p.m.mu.Unlock()
	return p.m.pools["python"].snap
}

func (p *pauses) untilReady() {
	p.t.Helper()
	for deadline := time.Now().Add(time.Minute); p.snap() != snapReady; time.Sleep(time.Millisecond) { // a safety net only
		if time.Now().After(deadline) {
			p.t.Fatalf("snapshot %s after a minute, want ready", p.snap())
		}
	}
}

// kind acquires a sandbox and says how it was made.
func (p *pauses) kind() StartKind {
	p.t.Helper()
	lease, err := p.m.Acquire(p.t.Context(), "python")
	if err != nil {
		p.t.Fatalf("Acquire: %v", err)
	}
	p.m.Release(lease.Sandbox)
	return lease.Kind
}

// failedPause checks that a failed restore falls back cold and is
// followed by a pause during which sandboxes cold-start, then ends it.
func (p *pauses) failedPause(round int) {
	p.t.Helper()
	if k := p.kind(); k != StartCold {
		p.t.Fatalf("round %d: Acquire as the restore fails: %s, want a cold fallback", round, k)
	}
	select {
	case <-p.paused:
	case <-time.After(time.Minute): // a safety net only
		p.t.Fatalf("round %d: no pause before restoring from the kept image again (snapshot %s)", round, p.snap())
	}
	if s := p.snap(); s == snapReady {
		p.t.Fatalf("round %d: the kept image is ready again during the pause", round)
	}
	if k := p.kind(); k != StartCold {
		p.t.Fatalf("round %d: Acquire during the pause: %s, want cold", round, k)
	}
	p.resume <- struct{}{}
	p.untilReady()
}

func (p *pauses) want(want ...time.Duration) {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if !slices.Equal(p.delays, want) {
		p.t.Errorf("pauses = %v, want %v", p.delays, want)
	}
}

// A failed restore whose image another server keeps using is not followed
// at once by restores from that same image: the pool cold-starts for a
// pause that grows with the failures in a row, then tries the image again.
// A restore that works resets the count.
func TestSnapshotKeptByAnotherServerPausesRestores(t *testing.T) {
	rt := &oneImage{Runtime: &runnertest.Runtime{}, restoreErr: errors.New("restore: runsc exited 128"), dropErr: runner.ErrSnapshotInUse}
	p := newPauses(t, rt)
	p.untilReady()
	rt.fail(2)
	p.failedPause(0)
	p.failedPause(1)
	if k := p.kind(); k != StartRestore {
		t.Fatalf("Acquire after the pauses: %s, want a restore from the kept image", k)
	}
	rt.fail(1)
	p.failedPause(2)
	p.want(snapBackoffMin, 2*snapBackoffMin, snapBackoffMin)
	if n := rt.dropCount(); n != 3 {
		t.Errorf("drops = %d, want one per failed restore (3)", n)
	}
}

// A restore that times out says nothing about its image: the image is
// kept and restored from again after a pause, until timeoutStrikes
// timeouts in a row; the next one drops it and has it rebuilt.
func TestSnapshotRestoreTimeoutKeepsTheImage(t *testing.T) {
	rt := &oneImage{Runtime: &runnertest.Runtime{}, restoreErr: fmt.Errorf("restore: signal: killed: %w", context.DeadlineExceeded)}
	p := newPauses(t, rt)
	p.untilReady()
	rt.fail(timeoutStrikes + 1)
	for round := range timeoutStrikes {
		p.failedPause(round)
		if n := rt.dropCount(); n != 0 {
			t.Fatalf("round %d: %d drops after a timeout, want the image kept", round, n)
		}
	}
	if k := p.kind(); k != StartCold {
		t.Fatalf("Acquire as the restore times out once more: %s, want cold", k)
	}
	for deadline := time.Now().Add(time.Minute); rt.dropCount() != 1; time.Sleep(time.Millisecond) { // a safety net only
		if time.Now().After(deadline) {
			t.Fatalf("%d drops after %d timeouts in a row, want the image dropped once", rt.dropCount(), timeoutStrikes+1)
		}
	}
	p.untilReady() // rebuilt, without a pause
	if k := p.kind(); k != StartRestore {
		t.Fatalf("Acquire after the rebuild: %s, want a restore", k)
	}
	p.want(snapBackoffMin, 2*snapBackoffMin, 4*snapBackoffMin)
}
