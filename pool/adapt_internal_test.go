package pool

import (
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner"
)

func TestDemandTarget(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var d demand
	if got := d.target(1, 6); got != 1 {
		t.Fatalf("no demand: target %d, want the floor 1", got)
	}
	d.refilled(250 * time.Millisecond)
	d.take(t0, true)
	if got := d.target(1, 6); got != 2 {
		// one miss buys one; 2·λ·R = 2·(1/20)·0.25 adds next to nothing
		t.Fatalf("after a miss: target %d, want 2", got)
	}
	d.decay(t0.Add(time.Minute))
	if got := d.target(1, 6); got != 1 {
		t.Fatalf("a minute after the miss: target %d, want 1", got)
	}
	// A burst of 200 takes in one instant: λ = 10/s, 2·λ·R = 5, capped.
	for range 200 {
		d.take(t0, false)
	}
	if got := d.target(1, 6); got != 6 {
		t.Fatalf("after a burst: target %d, want the ceiling 6", got)
	}
	d.decay(t0.Add(10 * time.Minute))
	if got := d.target(1, 6); got != 1 {
		t.Fatalf("after ten idle minutes: target %d, want the floor 1", got)
	}
	if got := d.target(2, 2); got != 2 {
		t.Fatalf("fixed pool: target %d, want 2", got)
	}
}

func TestBudgetKeepsFloorsAndCaps(t *testing.T) {
	const mib = 1 << 20
	spec := runner.Spec{Limits: runner.Limits{MemoryBytes: 100 * mib}}
	a := &tpool{tmpl: Template{Name: "a", Spec: spec, Size: 1, Max: 5}}
	b := &tpool{tmpl: Template{Name: "b", Spec: spec, Size: 2, Max: 5}}
	m := &Manager{cfg: Config{MemoryBudget: 500 * mib}, order: []*tpool{a, b}}

	// Empty: a may start one, but not eat into b's floor of two.
	if !m.budgetAllowsLocked(a) {
		t.Fatal("empty budget refused a's first sandbox")
	}
	a.ready = make([]*entry, 3) // 300 MiB, plus 200 reserved for b
	if m.budgetAllowsLocked(a) {
		t.Fatal("a grew into b's reserved floor")
	}
	if !m.budgetAllowsLocked(b) {
		t.Fatal("b could not fill its floor")
	}
	b.inUse = 2
	if m.budgetAllowsLocked(b) {
		t.Fatal("b grew past the budget")
	}

	m = &Manager{cfg: Config{MaxSandboxes: 2}, order: []*tpool{a}, live: 2}
	if m.budgetAllowsLocked(a) {
		t.Fatal("MaxSandboxes not enforced")
	}
}

func TestConfigRejectsFloorsOverBudget(t *testing.T) {
	spec := runner.Spec{Limits: runner.Limits{MemoryBytes: 512 << 20}}
	_, err := Config{MemoryBudget: 1 << 30, Templates: []Template{{Name: "a", Spec: spec, Size: 3}}}.withDefaults()
	if err == nil {
		t.Fatal("floors of 1.5 GiB accepted under a 1 GiB budget")
	}
	_, err = Config{MaxSandboxes: 2, Templates: []Template{{Name: "a", Spec: spec, Size: 3}}}.withDefaults()
	if err == nil {
		t.Fatal("floors of 3 sandboxes accepted under a cap of 2")
	}
}
