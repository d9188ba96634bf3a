package host

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReadMemInfo(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "meminfo")
	if err := os.WriteFile(good, []byte("MemTotal:       24683520 kB\nMemFree:        23953408 kB\nMemAvailable:   24280064 kB\nHugePages_Total:       0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := ReadMemInfo(good)
	if err != nil {
		t.Fatal(err)
	}
	if want := (MemInfo{Total: 24683520 << 10, Available: 24280064 << 10}); m != want {
		t.Errorf("got %+v, want %+v", m, want)
	}
	bad := filepath.Join(dir, "short")
	if err := os.WriteFile(bad, []byte("MemTotal:       24683520 kB\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadMemInfo(bad); err == nil {
		t.Error("a meminfo without MemAvailable was read")
	}
	if _, err := ReadMemInfo(filepath.Join(dir, "none")); err == nil {
		t.Error("a missing file was read")
	}
}
