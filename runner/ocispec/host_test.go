package ocispec

import (
	"os"
	"path/filepath"
	"testing"
)

func TestInstallAgent(t *testing.T) {
	src := filepath.Join(t.TempDir(), "agent")
	if err := os.WriteFile(src, []byte("binary"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "agent-dir")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// A second install replaces the first.
	for range 2 {
		if err := InstallAgent(src, dir); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(filepath.Join(dir, "paddock-agent"))
	if err != nil || fi.Mode().Perm() != 0o555 || fi.Size() != 6 {
		t.Fatalf("installed agent: %v, %v", fi, err)
	}
	if di, err := os.Stat(dir); err != nil || di.Mode().Perm() != 0o755 {
		t.Fatalf("agent dir: %v, %v", di, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("agent dir holds %d entries, want 1 (no temporary left)", len(entries))
	}
	if err := InstallAgent(filepath.Join(t.TempDir(), "missing"), dir); err == nil {
		t.Fatal("installing a missing agent succeeded")
	}
}

func TestNewID(t *testing.T) {
	a, err := NewID()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewID()
	if len(a) != 19 || a[:3] != "pd-" || a == b {
		t.Fatalf("ids %q and %q", a, b)
	}
}
