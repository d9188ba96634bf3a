package runsc_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/ocispec"
)

// TestGVisorKernelCPUWeightAndBurst: a sandbox starts at the batch CPU
// weight with no burst; once it is a kernel it has the kernel weight and a
// burst of one period's quota, and its quota still holds: two busy
// processes in it, for seconds, get no more CPU than the quota of the
// periods it ran in plus one burst (read from the kernel's cpu.stat and
// cpuacct, not from wall time).
func TestGVisorKernelCPUWeightAndBurst(t *testing.T) {
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
	cpu := filepath.Join(ocispec.CgroupRoot, "cpu", ocispec.CgroupsPath(sb.ID()))
	acct := filepath.Join(ocispec.CgroupRoot, "cpuacct", ocispec.CgroupsPath(sb.ID()))
	if _, err := os.Stat(cpu); err != nil {
		t.Skipf("no cgroup v1 cpu hierarchy: %v", err)
	}
	if got := cgroupInt(t, cpu, "cpu.shares"); got != 1024 {
		t.Errorf("pooled sandbox cpu.shares = %d, want 1024", got)
	}
	if got := cgroupInt(t, cpu, "cpu.cfs_burst_us"); got != 0 {
		t.Errorf("pooled sandbox cpu.cfs_burst_us = %d, want 0", got)
	}
	k, err := sb.(runner.KernelOpener).OpenKernel(t.Context(), runner.KernelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := cgroupInt(t, cpu, "cpu.shares"); got != 16384 {
		t.Errorf("kernel cpu.shares = %d, want 16384", got)
	}
	if got := cgroupInt(t, cpu, "cpu.cfs_burst_us"); got != 100000 {
		t.Errorf("kernel cpu.cfs_burst_us = %d, want 100000", got)
	}
	quota := cgroupInt(t, cpu, "cpu.cfs_quota_us")
	if quota != 100000 {
		t.Fatalf("cpu.cfs_quota_us = %d, want 100000 (1 CPU, the default)", quota)
	}

	periods0, usage0 := cpuStat(t, cpu)["nr_periods"], cgroupInt(t, acct, "cpuacct.usage")
	// Two processes spin for 3 s of their own clock: twice the quota's
	// demand, so the quota is what bounds them.
	code := "import os, time\n" +
		"pid = os.fork()\n" +
		"end = time.monotonic() + 3\n" +
		"while time.monotonic() < end: pass\n" +
		"if pid == 0: os._exit(0)\n" +
		"os.waitpid(pid, 0)\n"
	res, err := k.Execute(t.Context(), runner.ExecuteRequest{Code: code, Timeout: time.Minute, MaxOutput: 1 << 20}, nil)
	if err != nil || res.Status != "ok" {
		t.Fatalf("busy cell: %v %+v", err, res)
	}
	st := cpuStat(t, cpu)
	periods := st["nr_periods"] - periods0
	usedUS := (cgroupInt(t, acct, "cpuacct.usage") - usage0) / 1000
	allowed := periods*quota + 100000
	t.Logf("busy cell: %d µs of CPU in %d periods (%.2f of the quota), throttled in %d periods so far, bursts %d",
		usedUS, periods, float64(usedUS)/float64(periods*quota), st["nr_throttled"], st["nr_bursts"])
	if periods == 0 || usedUS == 0 {
		t.Fatalf("the busy cell left no trace in the cgroup: %d periods, %d µs", periods, usedUS)
	}
	// The period count is sampled a moment apart from the usage: one
	// period of slack.
	if usedUS > allowed+quota {
		t.Errorf("the kernel used %d µs of CPU in %d periods: over its quota of %d µs a period plus one burst", usedUS, periods, quota)
	}
}

func cgroupInt(t *testing.T, dir, name string) int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return n
}

func cpuStat(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "cpu.stat"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		out[k], _ = strconv.ParseInt(v, 10, 64)
	}
	return out
}
