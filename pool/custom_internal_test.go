package pool

import (
	"testing"

	"github.com/paddock-dev/paddock/runner"
)

// A sandbox started with its own limits weighs on the memory budget with
// its own memory limit, not the template's.
func TestBudgetCountsCustomMemory(t *testing.T) {
	const mib = 1 << 20
	spec := runner.Spec{Limits: runner.Limits{MemoryBytes: 256 * mib}}
	a := &tpool{tmpl: Template{Name: "a", Spec: spec, Size: 1, Max: 2}}
	m := &Manager{cfg: Config{MemoryBudget: 1024 * mib}, order: []*tpool{a}}

	// One pooled sandbox in use (256 MiB) and one of 768 MiB: the budget
	// is spent.
	a.inUse, a.custom, a.customMemory = 2, 1, 768*mib
	if m.budgetAllowsLocked(a) {
		t.Fatal("a refilled past the budget: the custom sandbox was counted at the template's 256 MiB")
	}
	// The same with a 128 MiB one leaves room for one more.
	a.customMemory = 128 * mib
	if !m.budgetAllowsLocked(a) {
		t.Fatal("a could not refill with 640 MiB of a 1 GiB budget free")
	}
}
