package pool_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// snapRuntime adds a fake snapshot ability to the fake runtime. Restored
// sandboxes are fake sandboxes too, told apart by the restores count.
type snapRuntime struct {
	*runnertest.Runtime

	mu         sync.Mutex
	builds     int
	restores   int
	drops      int
	buildErr   error
	restoreErr error
}

func (r *snapRuntime) Snapshot(ctx context.Context, spec runner.Spec) (runner.Snapshot, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.builds++
	if r.buildErr != nil {
		return runner.Snapshot{}, r.buildErr
	}
	return runner.Snapshot{Key: "k", Path: "/images/" + spec.Template, Spec: spec, Built: true}, nil
}

func (r *snapRuntime) Restore(ctx context.Context, img runner.Snapshot) (runner.Sandbox, error) {
	r.mu.Lock()
	err := r.restoreErr
	if err == nil {
		r.restores++
	}
	r.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return r.NewSandbox(img.Spec), nil
}

func (r *snapRuntime) Drop(runner.Snapshot) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.drops++
	return nil
}

func (r *snapRuntime) set(build, restore error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buildErr, r.restoreErr = build, restore
}

func (r *snapRuntime) counts() (builds, restores, drops int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.builds, r.restores, r.drops
}

func snapTmpl(name string, size int) pool.Template {
	t := tmpl(name, size)
	t.Snapshot = true
	return t
}

func acquireKind(t *testing.T, m *pool.Manager, name string) pool.StartKind {
	t.Helper()
	lease, err := m.Acquire(t.Context(), name)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	m.Release(lease.Sandbox)
	return lease.Kind
}

func TestSnapshotRestoresFillThePool(t *testing.T) {
	rt := &snapRuntime{Runtime: &runnertest.Runtime{}}
	m := newManager(t, rt, pool.Config{Templates: []pool.Template{snapTmpl("python", 2), tmpl("node", 1)}})
	waitFor(t, "python restored twice", func() bool { return stats(m, "python").Restores >= 2 })
	waitFor(t, "node filled", readyCount(m, "node"))
	if s := stats(m, "python"); s.Snapshot != "ready" || s.ColdStarts != 0 {
		t.Errorf("python stats %+v, want snapshot ready and no cold start", s)
	}
	if s := stats(m, "node"); s.Snapshot != "off" || s.Restores != 0 {
		t.Errorf("node stats %+v, want no snapshot and no restore", s)
	}
}

func TestSnapshotRestoreOnDemand(t *testing.T) {
	rt := &snapRuntime{Runtime: &runnertest.Runtime{}}
	m := newManager(t, rt, pool.Config{Templates: []pool.Template{snapTmpl("python", 0)}})
	waitFor(t, "snapshot ready", func() bool { return stats(m, "python").Snapshot == "ready" })
	if k := acquireKind(t, m, "python"); k != pool.StartRestore {
		t.Fatalf("Acquire with an empty pool and an image: %s, want restore", k)
	}
}

func TestSnapshotBrokenFallsBackAndRebuilds(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       error
		wantDrops int
	}{
		{"corrupt", errors.New("restore: bad image"), 1},
		{"missing", runner.ErrSnapshotMissing, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := &snapRuntime{Runtime: &runnertest.Runtime{}}
			m := newManager(t, rt, pool.Config{Templates: []pool.Template{snapTmpl("python", 0)}})
			waitFor(t, "snapshot ready", func() bool { return stats(m, "python").Snapshot == "ready" })

			rt.set(nil, tc.err)
			if k := acquireKind(t, m, "python"); k != pool.StartCold {
				t.Fatalf("Acquire after the image broke: %s, want a cold fallback", k)
			}
			waitFor(t, "rebuild", func() bool { b, _, _ := rt.counts(); return b >= 2 })
			if _, _, drops := rt.counts(); drops != tc.wantDrops {
				t.Errorf("drops = %d, want %d", drops, tc.wantDrops)
			}
			if s := stats(m, "python"); s.RestoreFailures != 1 {
				t.Errorf("RestoreFailures = %d, want 1", s.RestoreFailures)
			}

			rt.set(nil, nil)
			waitFor(t, "snapshot ready again", func() bool { return stats(m, "python").Snapshot == "ready" })
			if k := acquireKind(t, m, "python"); k != pool.StartRestore {
				t.Fatalf("Acquire after the rebuild: %s, want restore", k)
			}
		})
	}
}

func TestSnapshotBuildFailureKeepsServing(t *testing.T) {
	rt := &snapRuntime{Runtime: &runnertest.Runtime{}}
	rt.set(errors.New("checkpoint: not supported here"), nil)
	m := newManager(t, rt, pool.Config{Templates: []pool.Template{snapTmpl("python", 1)}})
	waitFor(t, "ready from cold starts", m.Ready)
	waitFor(t, "snapshot failed", func() bool { return stats(m, "python").Snapshot == "failed" })
	if k := acquireKind(t, m, "python"); k != pool.StartPool {
		t.Fatalf("Acquire: %s, want a pool hit", k)
	}
	if s := stats(m, "python"); s.Restores != 0 || s.ColdStarts == 0 {
		t.Errorf("stats %+v, want cold starts only", s)
	}
}
