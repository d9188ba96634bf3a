package steady

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
