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

// netSnapRuntime is a fake snapshotting runtime that tells a template's
// image from its networked one: their builds are counted apart, their
// paths differ, and restores of the networked one can be made to fail.
type netSnapRuntime struct {
	*runnertest.Runtime

	mu            sync.Mutex
	builds        map[bool]int // by spec.Network
	drops         int
	netRestoreErr error
}

func (r *netSnapRuntime) Snapshot(_ context.Context, spec runner.Spec) (runner.Snapshot, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.builds == nil {
		r.builds = map[bool]int{}
	}
	r.builds[spec.Network]++
	path := "/images/" + spec.Template
	if spec.Network {
		path += "+net"
	}
	return runner.Snapshot{Key: "k", Path: path, Spec: spec, Built: true}, nil
}

func (r *netSnapRuntime) Restore(_ context.Context, img runner.Snapshot) (runner.Sandbox, error) {
	r.mu.Lock()
	err := r.netRestoreErr
	r.mu.Unlock()
	if img.Spec.Network && err != nil {
		return nil, err
	}
	return r.NewSandbox(img.Spec), nil
}

func (r *netSnapRuntime) Drop(runner.Snapshot) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.drops++
	return nil
}

func (r *netSnapRuntime) failNetRestores(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.netRestoreErr = err
}

func (r *netSnapRuntime) netBuilds() (none, networked int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.builds[false], r.builds[true]
}

// leaseSpec acquires a sandbox of python with opts and returns how it
// was made and the spec the fake runtime made it of.
func leaseSpec(t *testing.T, m *pool.Manager, rt *netSnapRuntime, opts pool.RunOptions) (pool.StartKind, runner.Spec) {
	t.Helper()
	lease, err := m.AcquireWith(t.Context(), "python", opts)
	if err != nil {
		t.Fatalf("AcquireWith(%+v): %v", opts, err)
	}
	defer m.Release(lease.Sandbox)
	return lease.Kind, sandboxByID(t, rt.Runtime, lease.Sandbox.ID()).Spec
}

// A networked start of a snapshotted template restores the template's
// networked image, which the first networked start has built (that start
// itself is cold); starts without a network keep the pool and its image;
// networked sandboxes never join the pool.
func TestNetworkedStartsRestoreTheNetworkedImage(t *testing.T) {
	rt := &netSnapRuntime{Runtime: &runnertest.Runtime{}}
	m := newManager(t, rt, pool.Config{Templates: []pool.Template{limitedTmpl(1)}})
	waitFor(t, "the pool filled from its image", func() bool { s := stats(m, "python"); return s.Ready == 1 && s.Restores == 1 })
	if s := stats(m, "python"); s.NetworkSnapshot != "off" {
		t.Fatalf("NetworkSnapshot before any networked start = %q, want off", s.NetworkSnapshot)
	}
	if _, n := rt.netBuilds(); n != 0 {
		t.Fatalf("%d networked images built before any networked start, want 0", n)
	}
	limits := runner.Limits{MemoryBytes: 512 * mib, Processes: 64, CPUs: 1, DiskBytes: 256 * mib, OpenFiles: 1024}

	kind, spec := leaseSpec(t, m, rt, pool.RunOptions{Network: true})
	if kind != pool.StartCold || !spec.Network || spec.Warmup != "" {
		t.Fatalf("first networked start: %s, network %v, warm-up %q; want cold, networked, no warm-up", kind, spec.Network, spec.Warmup)
	}
	waitFor(t, "the networked image", func() bool { return stats(m, "python").NetworkSnapshot == "ready" })

	for i := range 2 {
		kind, spec = leaseSpec(t, m, rt, pool.RunOptions{Network: true})
		if kind != pool.StartRestore || !spec.Network || spec.Warmup != "import numpy" || spec.Limits != limits {
			t.Fatalf("networked start %d with the image ready: %s, %+v; want a restore of the networked, warmed-up image", i, kind, spec)
		}
	}
	kind, spec = leaseSpec(t, m, rt, pool.RunOptions{})
	if kind != pool.StartPool || spec.Network {
		t.Fatalf("a start without a network: %s, network %v; want a pool hit without one", kind, spec.Network)
	}
	waitFor(t, "the pool refilled", func() bool { return stats(m, "python").Ready == 1 })
	for _, sb := range rt.Sandboxes() {
		if sb.Spec.Network && !sb.Destroyed() {
			t.Errorf("networked sandbox %s still alive after its release (in the pool?)", sb.ID())
		}
	}
	s := stats(m, "python")
	if s.Restores != 4 || s.ColdStarts != 1 || s.Hits != 1 || s.Misses != 0 {
		t.Errorf("stats %+v, want 4 restores (2 networked, 2 for the pool), 1 cold start, 1 hit, no miss", s)
	}
	if none, n := rt.netBuilds(); none != 1 || n != 1 {
		t.Errorf("images built: %d without a network and %d networked, want 1 and 1", none, n)
	}
}

// Which networked starts may restore the networked image: one with other
// limits than the template's starts cold, as do all of a template that
// is not snapshotted, which never builds one.
func TestNetworkedStartsThatStayCold(t *testing.T) {
	t.Run("other limits", func(t *testing.T) {
		rt := &netSnapRuntime{Runtime: &runnertest.Runtime{}}
		m := newManager(t, rt, pool.Config{Templates: []pool.Template{limitedTmpl(0)}})
		leaseSpec(t, m, rt, pool.RunOptions{Network: true})
		waitFor(t, "the networked image", func() bool { return stats(m, "python").NetworkSnapshot == "ready" })
		kind, spec := leaseSpec(t, m, rt, pool.RunOptions{Network: true, Limits: runner.Limits{MemoryBytes: 128 * mib}})
		if kind != pool.StartCold || !spec.Network || spec.Limits.MemoryBytes != 128*mib {
			t.Fatalf("networked start with other limits: %s, %+v; want cold with its limits", kind, spec)
		}
	})
	t.Run("not snapshotted", func(t *testing.T) {
		rt := &netSnapRuntime{Runtime: &runnertest.Runtime{}}
		tm := limitedTmpl(0)
		tm.Snapshot = false
		m := newManager(t, rt, pool.Config{Templates: []pool.Template{tm}})
		for range 2 {
			if kind, spec := leaseSpec(t, m, rt, pool.RunOptions{Network: true}); kind != pool.StartCold || !spec.Network {
				t.Fatalf("networked start of a template without snapshots: %s, network %v; want cold, networked", kind, spec.Network)
			}
		}
		if s := stats(m, "python"); s.NetworkSnapshot != "off" {
			t.Errorf("NetworkSnapshot = %q, want off", s.NetworkSnapshot)
		}
		if _, n := rt.netBuilds(); n != 0 {
			t.Errorf("%d networked images built, want 0", n)
		}
	})
}

// A networked restore that fails falls back to a cold start, is counted,
// and has the networked image dropped and rebuilt; the template's own
// image is left alone.
func TestNetworkedRestoreFailureFallsBackCold(t *testing.T) {
	rt := &netSnapRuntime{Runtime: &runnertest.Runtime{}}
	m := newManager(t, rt, pool.Config{Templates: []pool.Template{limitedTmpl(0)}})
	waitFor(t, "the template's image", func() bool { return stats(m, "python").Snapshot == "ready" })
	leaseSpec(t, m, rt, pool.RunOptions{Network: true})
	waitFor(t, "the networked image", func() bool { return stats(m, "python").NetworkSnapshot == "ready" })

	rt.failNetRestores(errors.New("restore: runsc exited 128"))
	if kind, spec := leaseSpec(t, m, rt, pool.RunOptions{Network: true}); kind != pool.StartCold || !spec.Network {
		t.Fatalf("networked start as its restore fails: %s, network %v; want a cold networked fallback", kind, spec.Network)
	}
	waitFor(t, "the networked image rebuilt", func() bool { _, n := rt.netBuilds(); return n == 2 })
	s := stats(m, "python")
	if s.RestoreFailures != 1 || s.Snapshot != "ready" {
		t.Errorf("stats %+v, want 1 restore failure and the template's own image still ready", s)
	}
	if none, _ := rt.netBuilds(); none != 1 {
		t.Errorf("the template's own image was built %d times, want once", none)
	}

	rt.failNetRestores(nil)
	waitFor(t, "the networked image ready again", func() bool { return stats(m, "python").NetworkSnapshot == "ready" })
	if kind, _ := leaseSpec(t, m, rt, pool.RunOptions{Network: true}); kind != pool.StartRestore {
		t.Fatalf("networked start after the rebuild: %s, want a restore", kind)
	}
	if kind, _ := leaseSpec(t, m, rt, pool.RunOptions{}); kind != pool.StartRestore {
		t.Fatalf("start without a network: %s, want a restore of the template's own image", kind)
	}
}
