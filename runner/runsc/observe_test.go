package runsc

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestObserveSeesEveryInvocation checks that Observe gets each runsc
// command's argv and CPU, a failed one's too. The fake runsc spins until
// the kernel has charged it one clock tick of user time (10 ms at the
// usual USER_HZ of 100), so its CPU is at least that whatever the
// machine's speed.
func TestObserveSeesEveryInvocation(t *testing.T) {
	dir := t.TempDir()
	script := `#!/bin/sh
while [ "$(cut -d' ' -f14 /proc/$$/stat)" -lt 1 ]; do :; done
case "$*" in
  *" delete "*pd-bad*) echo "container not found" >&2; exit 1 ;;
esac
`
	path := filepath.Join(dir, "runsc")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []Invocation
	r := &Runsc{Path: path, Root: "/state/runsc", Platform: "systrap", Logger: slog.New(slog.DiscardHandler),
		Observe: func(inv Invocation) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, inv)
		}}
	ctx := t.Context()
	if err := r.Delete(ctx, "pd-1", DeleteOpts{Force: true}); err != nil {
		t.Fatal(err)
	}
	if err := r.Delete(ctx, "pd-bad", DeleteOpts{Force: true}); err == nil {
		t.Fatal("deleting pd-bad: no error from a runsc that exited 1")
	}
	want := []string{
		"--root=/state/runsc --platform=systrap delete --force pd-1",
		"--root=/state/runsc --platform=systrap delete --force pd-bad",
	}
	var got []string
	for _, inv := range seen {
		got = append(got, strings.Join(inv.Argv, " "))
		if inv.CPU < 10*time.Millisecond {
			t.Errorf("%s: CPU %s, want at least the 10 ms the script spun for", inv.Argv, inv.CPU)
		}
		if inv.Wall < inv.CPU {
			t.Errorf("%s: wall %s shorter than the CPU %s of a one-threaded script", inv.Argv, inv.Wall, inv.CPU)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("observed argv:\n got %q\nwant %q", got, want)
	}
}
