package kernels_test

import (
	"context"
	"testing"

	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// A running cell caps the pool's sandbox starts at BusyStartBudget until
// the kernel has ended it.
func TestRunningCellCapsStarts(t *testing.T) {
	rt := &runnertest.Runtime{}
	f := newFixtureWith(t, rt, pool.Config{Templates: []pool.Template{{Name: "python", Spec: runner.Spec{Language: "python"}}},
		StartBudget: 4, BusyStartBudget: 1}, kernels.Config{})
	p := f.pool
	info := f.create(t, "", kernels.CreateOptions{})
	k := f.kernel(t, info)
	if got := p.StartBudget(); got != 4 {
		t.Fatalf("StartBudget with no cell = %d, want 4", got)
	}

	ctx, cancel := context.WithCancel(t.Context())
	running := f.goExecute(ctx, "", info.ID, kernels.ExecuteOptions{Code: "sleep 1h"})
	waitFor(t, "cell running", k.Running)
	if got := p.StartBudget(); got != 1 {
		t.Errorf("StartBudget while a cell runs = %d, want 1", got)
	}
	cancel() // interrupts the cell
	<-running
	if got := p.StartBudget(); got != 4 {
		t.Errorf("StartBudget once the cell ended = %d, want 4", got)
	}
}
