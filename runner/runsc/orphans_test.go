package runsc

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestFindStrays(t *testing.T) {
	proc := t.TempDir()
	const root = "/var/lib/paddock/runsc"
	write := func(pid string, args ...string) {
		t.Helper()
		dir := filepath.Join(proc, pid)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "cmdline"), []byte(strings.Join(args, "\x00")+"\x00"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("10", "runsc-sandbox", "--root="+root, "--platform=systrap", "boot", "--bundle=/s/bundles/pd-0123456789abcdef", "--io-fds=3")
	write("11", "runsc-gofer", "--root="+root, "gofer", "--bundle", "/s/bundles/pd-1111111111111111", "pd-1111111111111111")
	write("12", "/usr/bin/runsc", "--root="+root, "restore", "--detach", "pd-2222222222222222")
	write("13", "/usr/bin/runsc", "--root="+root, "list")                                            // names no container
	write("14", "runsc-sandbox", "--root="+root+"-other", "boot", "--bundle=/o/pd-3333333333333333") // another root
	write("15", "editor", "notes about --root="+root)                                                // not the argument
	write("abc", "runsc", "--root="+root)                                                            // not a pid
	if err := os.MkdirAll(filepath.Join(proc, "16"), 0o755); err != nil {                            // no cmdline: gone
		t.Fatal(err)
	}

	got := findStrays(proc, root)
	slices.SortFunc(got, func(a, b stray) int { return a.pid - b.pid })
	want := []stray{{10, "pd-0123456789abcdef"}, {11, "pd-1111111111111111"}, {12, "pd-2222222222222222"}, {13, ""}}
	if !slices.Equal(got, want) {
		t.Errorf("findStrays = %v, want %v", got, want)
	}
}
