package kernels_test

import (
	"testing"

	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// newPremadeFixture is newFixture with one kernel-ready sandbox kept for
// the python template.
func newPremadeFixture(t *testing.T, rt *runnertest.Runtime) *fixture {
	t.Helper()
	return newFixtureWith(t, rt, pool.Config{Templates: []pool.Template{
		{Name: "python", Spec: runner.Spec{Language: "python", Limits: runner.Limits{CPUs: 1}}, Kernels: 1},
	}}, kernels.Config{})
}

func (f *fixture) kernelReady() bool {
	for _, s := range f.pool.Stats() {
		if s.Template == "python" {
			return s.KernelsReady == 1
		}
	}
	return false
}

func TestCreateTakesPremadeKernel(t *testing.T) {
	f := newPremadeFixture(t, &runnertest.Runtime{})
	waitFor(t, "a kernel-ready sandbox", f.kernelReady)

	info := f.create(t, "alice", kernels.CreateOptions{})
	if info.Start != pool.StartKernel || info.Opening.Kernel != 0 {
		t.Errorf("start, kernel time = %q, %v; want %q, 0", info.Start, info.Opening.Kernel, pool.StartKernel)
	}
	res, err := f.m.Execute(t.Context(), "alice", info.ID, kernels.ExecuteOptions{Code: "x = 1"}, nil)
	if err != nil || res.Status != runner.StatusOK || res.ExecutionCount != 1 {
		t.Fatalf("Execute = %+v, %v; want ok, count 1", res, err)
	}
	if k := f.kernel(t, info); k.Executes() != 1 {
		t.Errorf("the premade kernel ran %d cells, want 1", k.Executes())
	}
}

func TestCreateOpensItsOwnKernel(t *testing.T) {
	tests := []struct {
		name string
		o    kernels.CreateOptions
	}{
		{"env", kernels.CreateOptions{Env: map[string]string{"K": "V"}}},
		{"other limits", kernels.CreateOptions{Limits: runner.Limits{CPUs: 0.5}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newPremadeFixture(t, &runnertest.Runtime{})
			waitFor(t, "a kernel-ready sandbox", f.kernelReady)
			info := f.create(t, "alice", tc.o)
			if info.Start == pool.StartKernel {
				t.Fatalf("start = %q, want a sandbox of its own", info.Start)
			}
			k := f.kernel(t, info)
			if tc.o.Env != nil && k.Options.Env["K"] != "V" {
				t.Errorf("kernel env = %v, want K=V", k.Options.Env)
			}
			if !f.kernelReady() {
				t.Errorf("the kernel-ready sandbox was used")
			}
		})
	}
}
