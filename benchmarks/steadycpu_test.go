package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseProcStatBusy(t *testing.T) {
	const stat = `cpu  1000 50 300 90000 700 20 30 5 40 0
cpu0 500 25 150 45000 350 10 15 2 20 0
cpu1 500 25 150 45000 350 10 15 3 20 0
intr 12345
`
	got, err := parseProcStatBusy(strings.NewReader(stat))
	if err != nil {
		t.Fatal(err)
	}
	// user 1000 + nice 50 + system 300 + irq 20 + softirq 30 + steal 5
	// ticks at 100 Hz; idle, iowait and guest left out.
	if got != 14.05 {
		t.Errorf("busy = %v, want 14.05", got)
	}
	if _, err := parseProcStatBusy(strings.NewReader("intr 1\n")); err == nil {
		t.Error("no cpu line: no error")
	}
	if _, err := parseProcStatBusy(strings.NewReader("cpu 1 2 3\n")); err == nil {
		t.Error("short cpu line: no error")
	}
}

func TestParsePidStatCPU(t *testing.T) {
	// A name with spaces and a ')' of its own: fields count from the last.
	line := "4242 (pad (dock) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 30 20 20 0 12 0 100 1000 10"
	got, err := parsePidStatCPU(line)
	if err != nil {
		t.Fatal(err)
	}
	// utime 250 + stime 50 + cutime 30 + cstime 20 ticks.
	if got != 3.5 {
		t.Errorf("cpu = %v, want 3.5", got)
	}
	for _, bad := range []string{"4242 no name", "4242 (x) S 1 2 3", "4242 (x) S 1 2 3 4 5 6 7 8 9 10 11 x 1 1 1"} {
		if _, err := parsePidStatCPU(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestCPUPerRun(t *testing.T) {
	u := cpuUsage{Machine: 30, Bench: 2, Children: 12, Server: 4, Sandboxes: 16}
	if got := u.machinePerRun(40); got != 0.7 {
		t.Errorf("machine per run = %v, want 0.7", got)
	}
	if got := u.attributedPerRun(targetPaddock, 40); got != 0.5 {
		t.Errorf("paddock attributed per run = %v, want 0.5", got)
	}
	if got := u.attributedPerRun(targetRaw, 40); got != 0.3 {
		t.Errorf("raw attributed per run = %v, want 0.3", got)
	}
	if u.machinePerRun(0) != 0 || u.attributedPerRun(targetRaw, 0) != 0 {
		t.Error("no runs: not 0")
	}
	if got := (cpuUsage{Machine: 1, Bench: 3}).machinePerRun(2); got != 0 {
		t.Errorf("bench above the machine: %v, want 0", got)
	}
}

func TestReadCgroupCPU(t *testing.T) {
	dir := t.TempDir()
	v1 := filepath.Join(dir, "v1")
	v2 := filepath.Join(dir, "v2")
	mustWrite(t, filepath.Join(v1, "cpuacct.usage"), "2500000000\n")
	mustWrite(t, filepath.Join(v2, "cpu.stat"), "usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\n")
	if got, err := readCgroupCPU(v1); err != nil || got != 2.5 {
		t.Errorf("v1 = %v, %v; want 2.5", got, err)
	}
	if got, err := readCgroupCPU(v2); err != nil || got != 1.5 {
		t.Errorf("v2 = %v, %v; want 1.5", got, err)
	}
	if _, err := readCgroupCPU(filepath.Join(dir, "gone")); err == nil {
		t.Error("missing cgroup: no error")
	}
}

// TestCPUMeterSandboxes checks the sandbox cgroup sum: what live cgroups
// used during the window, the whole life of those born in it, the last
// read of those removed meanwhile, and nothing of other servers'.
func TestCPUMeterSandboxes(t *testing.T) {
	root := t.TempDir()
	usage := func(id, ns string) { mustWrite(t, filepath.Join(root, id, "cpuacct.usage"), ns+"\n") }
	own := func(id string) bool { return strings.HasPrefix(id, "mine-") }
	usage("mine-a", "1000000000")  // alive before the window: 1 s then
	usage("other-x", "5000000000") // another server's
	m := startCPUMeter(cpuSources{sandboxes: own, cgroupRoot: root})
	usage("mine-a", "3000000000")
	usage("mine-b", "500000000")
	usage("mine-c", "250000000")
	m.poll()
	if err := os.RemoveAll(filepath.Join(root, "mine-c")); err != nil {
		t.Fatal(err)
	}
	usage("other-y", "9000000000")
	u := m.stop()
	// (3 - 1) + 0.5 + 0.25
	if u.Sandboxes != 2.75 {
		t.Errorf("sandboxes = %v, want 2.75", u.Sandboxes)
	}
	if u.Machine < 0 || u.Bench < 0 {
		t.Errorf("usage = %+v", u)
	}
}

func mustWrite(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
