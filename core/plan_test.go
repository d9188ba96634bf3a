package core_test

import (
	"testing"

	"github.com/paddock-dev/paddock/core"
)

// A run is checked once: the plan CheckRun returns runs as it was
// checked, for the caller it was checked for; a plan CheckRun did not
// return runs nothing.
func TestRunPlanned(t *testing.T) {
	f := newFixture(t, core.Config{})
	c := core.Caller{Tenant: "alice", Door: "test"}
	plan, err := f.svc.CheckRun(c, core.RunInput{Language: "python", Code: "hello"})
	if err != nil || plan.Template() != "python" {
		t.Fatalf("CheckRun = %q, %v", plan.Template(), err)
	}
	res, err := f.svc.RunPlanned(t.Context(), plan, nil)
	if err != nil || string(res.Result.Stdout) != "hello" || res.Template != "python" {
		t.Fatalf("RunPlanned = %+v, %v", res, err)
	}
	if _, err := f.svc.RunPlanned(t.Context(), core.RunPlan{}, nil); core.Classify(err).Kind != core.KindInternal {
		t.Errorf("RunPlanned(zero plan) = %v, want an internal error", err)
	}
	if got := f.rt.Starts(); got != 1 {
		t.Errorf("sandboxes created: %d, want 1 (the zero plan runs nothing)", got)
	}
}
