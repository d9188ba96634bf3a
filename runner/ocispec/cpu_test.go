package ocispec

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/runner"
)

func TestInteractiveWritesWeightAndBurstV1(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "cpu", "paddock", "pd-1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Interactive(root, "/paddock/pd-1", runner.Limits{CPUs: 0.5}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"cpu.shares": "16384", "cpu.cfs_burst_us": "50000"} {
		if got := readFile(t, filepath.Join(dir, name)); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

func TestInteractiveWritesWeightAndBurstV2(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "paddock", "pd-1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cpu.max"), []byte("100000 100000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Interactive(root, "/paddock/pd-1", runner.Limits{}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"cpu.weight": "625", "cpu.max.burst": "100000"} {
		if got := readFile(t, filepath.Join(dir, name)); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

func TestInteractiveWithoutCgroup(t *testing.T) {
	err := Interactive(t.TempDir(), "/paddock/pd-gone", runner.Limits{})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v, want fs.ErrNotExist", err)
	}
}

func TestRenderStartsAtBatchWeight(t *testing.T) {
	s := Render("pd-1", runner.Spec{Language: "python", Rootfs: "/r"}, "/a")
	if got := *s.Linux.Resources.CPU.Shares; got != 1024 {
		t.Fatalf("shares = %d, want 1024", got)
	}
	if got := *s.Linux.Resources.CPU.Quota; got != 100000 {
		t.Fatalf("quota = %d, want 100000", got)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
