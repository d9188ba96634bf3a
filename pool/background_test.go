package pool_test

import (
	"testing"

	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// TestRefillsAreBackgroundStarts: the sandboxes the pool makes for
// itself, started or restored, are background starts (the runtime may
// bring them up at the lowest CPU weight); one made for a request that
// found none ready is not, since its caller waits for it.
func TestRefillsAreBackgroundStarts(t *testing.T) {
	for _, tc := range []struct {
		name     string
		size     int
		snapshot bool
		kind     pool.StartKind
		want     bool
	}{
		{name: "pool hit, cold-started", size: 1, kind: pool.StartPool, want: true},
		{name: "pool hit, restored", size: 1, snapshot: true, kind: pool.StartPool, want: true},
		{name: "miss, cold start", size: 0, kind: pool.StartCold, want: false},
		{name: "miss, restore", size: 0, snapshot: true, kind: pool.StartRestore, want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := &snapRuntime{Runtime: &runnertest.Runtime{}}
			tp := tmpl("python", tc.size)
			tp.Snapshot = tc.snapshot
			m := newManager(t, rt, pool.Config{Templates: []pool.Template{tp}})
			waitFor(t, "the pool to fill and its snapshot to settle", func() bool {
				s := stats(m, "python")
				return s.Ready == tc.size && (!tc.snapshot || s.Snapshot == "ready")
			})
			l, err := m.Acquire(t.Context(), "python")
			if err != nil {
				t.Fatal(err)
			}
			defer m.Release(l.Sandbox)
			if l.Kind != tc.kind {
				t.Fatalf("lease kind = %s, want %s", l.Kind, tc.kind)
			}
			if got := l.Sandbox.(*runnertest.Sandbox).Spec.Background; got != tc.want {
				t.Errorf("spec.Background = %v, want %v", got, tc.want)
			}
		})
	}
}
