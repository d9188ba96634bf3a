package runc_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/ocispec"
)

// TestRuncKernelCPUWeightAndBurst: a container starts at the batch CPU
// weight with no burst, and gets the kernel weight and a burst of one
// period's quota when it becomes a kernel, its quota unchanged.
func TestRuncKernelCPUWeightAndBurst(t *testing.T) {
	e := newRealEnv(t)
	sb, err := e.rt.Start(t.Context(), e.specs["python"])
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := sb.Destroy(context.Background()); err != nil {
			t.Errorf("destroy: %v", err)
		}
	}()
	dir := filepath.Join(ocispec.CgroupRoot, "cpu", "paddock-runc", sb.ID())
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no cgroup v1 cpu hierarchy: %v", err)
	}
	check := func(when string, want map[string]string) {
		t.Helper()
		for name, w := range want {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(string(b)); got != w {
				t.Errorf("%s: %s = %s, want %s", when, name, got, w)
			}
		}
	}
	check("pooled", map[string]string{"cpu.shares": "1024", "cpu.cfs_burst_us": "0", "cpu.cfs_quota_us": "100000"})
	if _, err := sb.(runner.KernelOpener).OpenKernel(t.Context(), runner.KernelOptions{}); err != nil {
		t.Fatal(err)
	}
	check("kernel", map[string]string{"cpu.shares": "16384", "cpu.cfs_burst_us": "100000", "cpu.cfs_quota_us": "100000"})
}
