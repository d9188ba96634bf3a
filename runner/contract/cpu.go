package contract

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/ocispec"
)

// testCPU: a sandbox starts at the batch CPU weight with no burst; once
// it is a kernel it has the kernel weight and a burst of one period's
// quota, and its quota still holds: two busy processes in it, for
// seconds, get no more CPU than the quota of the periods it ran in plus
// one burst (read from the kernel's cpu.stat and cpuacct, not from wall
// time).
func testCPU(t *testing.T, e Env) {
	sb := start(t, e, "python", nil)
	cpu := filepath.Join(ocispec.CgroupRoot, "cpu", e.Cgroup(sb.ID()))
	acct := filepath.Join(ocispec.CgroupRoot, "cpuacct", e.Cgroup(sb.ID()))
	if _, err := os.Stat(cpu); err != nil {
		t.Skipf("no cgroup v1 cpu hierarchy: %v", err)
	}
	want := func(when, name string, v int64) {
		t.Helper()
		if got := cgroupInt(t, cpu, name); got != v {
			t.Errorf("%s: %s = %d, want %d", when, name, got, v)
		}
	}
	want("pooled", "cpu.shares", 1024)
	want("pooled", "cpu.cfs_burst_us", 0)
	k, err := sb.(runner.KernelOpener).OpenKernel(t.Context(), runner.KernelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want("kernel", "cpu.shares", 16384)
	want("kernel", "cpu.cfs_burst_us", 100000)
	// On a host of two CPUs or more the kernel keeps to one: its quota's.
	cpuset := filepath.Join(ocispec.CgroupRoot, "cpuset", e.Cgroup(sb.ID()))
	if b, err := os.ReadFile(filepath.Join(cpuset, "cpuset.cpus")); err == nil && runtime.NumCPU() > 1 {
		if got := strings.TrimSpace(string(b)); strings.ContainsAny(got, ",-") {
			t.Errorf("kernel: cpuset.cpus = %q, want one CPU", got)
		}
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
	if res, _ := execute(t, k, code, time.Minute); res.Status != runner.StatusOK {
		t.Fatalf("busy cell: %+v", res)
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
