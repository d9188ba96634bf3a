package host

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
	got, err := ParseProcStatBusy(strings.NewReader(stat))
	if err != nil {
		t.Fatal(err)
	}
	// user 1000 + nice 50 + system 300 + irq 20 + softirq 30 + steal 5
	// ticks at 100 Hz; idle, iowait and guest left out.
	if got != 14.05 {
		t.Errorf("busy = %v, want 14.05", got)
	}
	if _, err := ParseProcStatBusy(strings.NewReader("intr 1\n")); err == nil {
		t.Error("no cpu line: no error")
	}
	if _, err := ParseProcStatBusy(strings.NewReader("cpu 1 2 3\n")); err == nil {
		t.Error("short cpu line: no error")
	}
}

func TestParsePidStatCPU(t *testing.T) {
	// A name with spaces and a ')' of its own: fields count from the last.
	line := "4242 (pad (dock) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 30 20 20 0 12 0 100 1000 10"
	got, err := ParsePidStatCPU(line)
	if err != nil {
		t.Fatal(err)
	}
	// utime 250 + stime 50 + cutime 30 + cstime 20 ticks.
	if got != 3.5 {
		t.Errorf("cpu = %v, want 3.5", got)
	}
	for _, bad := range []string{"4242 no name", "4242 (x) S 1 2 3", "4242 (x) S 1 2 3 4 5 6 7 8 9 10 11 x 1 1 1"} {
		if _, err := ParsePidStatCPU(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestReadCgroupCPU(t *testing.T) {
	dir := t.TempDir()
	v1 := filepath.Join(dir, "v1")
	v2 := filepath.Join(dir, "v2")
	mustWrite(t, filepath.Join(v1, "cpuacct.usage"), "2500000000\n")
	mustWrite(t, filepath.Join(v2, "cpu.stat"), "usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\n")
	if got, err := ReadCgroupCPU(v1); err != nil || got != 2.5 {
		t.Errorf("v1 = %v, %v; want 2.5", got, err)
	}
	if got, err := ReadCgroupCPU(v2); err != nil || got != 1.5 {
		t.Errorf("v2 = %v, %v; want 1.5", got, err)
	}
	if _, err := ReadCgroupCPU(filepath.Join(dir, "gone")); err == nil {
		t.Error("missing cgroup: no error")
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
