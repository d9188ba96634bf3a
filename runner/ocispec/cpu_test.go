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

func TestInteractivePinsV1(t *testing.T) {
	root := t.TempDir()
	for _, h := range []string{"cpu", "cpuset"} {
		if err := os.MkdirAll(filepath.Join(root, h, "paddock", "pd-1"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cpuset := filepath.Join(root, "cpuset", "paddock", "pd-1")
	if err := os.WriteFile(filepath.Join(cpuset, "cpuset.effective_cpus"), []byte("0-3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Interactive(root, "/paddock/pd-1", runner.Limits{CPUs: 1.5}); err != nil {
		t.Fatal(err)
	}
	// 1.5 CPUs of quota: two CPUs, whichever two the round robin gives.
	got := readFile(t, filepath.Join(cpuset, "cpuset.cpus"))
	if cpus, err := parseCPUList(got); err != nil || len(cpus) != 2 {
		t.Errorf("cpuset.cpus = %q, want two of 0-3", got)
	}
}

func TestInteractivePinsV2WhereCpusetIsOn(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "paddock", "pd-1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{"cpu.max": "100000 100000\n", "cpuset.cpus.effective": "0-1\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := Interactive(root, "/paddock/pd-1", runner.Limits{}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "cpuset.cpus")); got != "0" && got != "1" {
		t.Errorf("cpuset.cpus = %q, want one of 0-1", got)
	}
}

func TestPinCPUs(t *testing.T) {
	for _, tt := range []struct {
		allowed string
		n       int
		seq     uint64
		want    string
	}{
		{"0-1", 1, 0, "1"},
		{"0-1", 1, 1, "0"},
		{"0-1", 1, 2, "1"},
		{"0-3", 1, 0, "3"},
		{"0-3", 1, 3, "0"},
		{"0-3", 2, 0, "2,3"},
		{"0-3", 2, 3, "0,3"}, // wraps: 0, then 3
		{"0,2,4-5", 1, 1, "4"},
		{"0-1", 2, 0, ""}, // nothing to narrow
		{"3", 1, 0, ""},
		{"0-3", 0, 0, "3"}, // at least one CPU
	} {
		got, err := PinCPUs(tt.allowed, tt.n, tt.seq)
		if err != nil || got != tt.want {
			t.Errorf("PinCPUs(%q, %d, %d) = %q, %v; want %q", tt.allowed, tt.n, tt.seq, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "a", "3-1", "-1", "1-x"} {
		if got, err := PinCPUs(bad, 1, 0); err == nil {
			t.Errorf("PinCPUs(%q) = %q, want an error", bad, got)
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

func TestRenderBackgroundStartsAtIdleWeight(t *testing.T) {
	s := Render("pd-1", runner.Spec{Language: "python", Rootfs: "/r", Background: true}, "/a")
	if got := *s.Linux.Resources.CPU.Shares; got != 2 {
		t.Fatalf("shares = %d, want 2", got)
	}
	if got := *s.Linux.Resources.CPU.Quota; got != 100000 {
		t.Fatalf("quota = %d, want 100000 (the quota is the same)", got)
	}
}

func TestBatch(t *testing.T) {
	for _, tc := range []struct {
		name       string
		dir        string // under the root
		file, want string
		others     map[string]string
	}{
		{name: "v1", dir: "cpu/paddock/pd-1", file: "cpu.shares", want: "1024"},
		{name: "v2", dir: "paddock/pd-1", file: "cpu.weight", want: "39", others: map[string]string{"cpu.max": "100000 100000\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, tc.dir)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			files := map[string]string{tc.file: "2\n"}
			for k, v := range tc.others {
				files[k] = v
			}
			for k, v := range files {
				if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := Batch(root, "/paddock/pd-1"); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, filepath.Join(dir, tc.file)); got != tc.want {
				t.Errorf("%s = %q, want %q", tc.file, got, tc.want)
			}
		})
	}
}

func TestBatchWithoutCgroup(t *testing.T) {
	if err := Batch(t.TempDir(), "/paddock/pd-gone"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v, want fs.ErrNotExist", err)
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
