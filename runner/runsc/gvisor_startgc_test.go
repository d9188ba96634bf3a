package runsc_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner/runsc"
)

const (
	gcSlowed   = "paddock: Sentry GC percent 400 until the kernel starts"
	gcRestored = "paddock: Sentry GC percent 100 again after the start"
)

// TestGVisorSentryStartupGC checks the runsc that `make runsc` builds:
// a sandbox's Sentry collects less often while it boots or restores, and
// goes back to Go's default once its kernel has started. Both a cold
// start and a restore from a snapshot must say so in their boot logs.
// The runsc of a plain `go install` says neither, and fails here.
func TestGVisorSentryStartupGC(t *testing.T) {
	e := newRealEnv(t)
	logs := t.TempDir()
	rt := ownRuntime(t, e, runsc.Config{SnapshotDir: t.TempDir(), DebugLog: logs})
	spec := e.specs["python"]

	cold, err := rt.Start(t.Context(), spec)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	waitBootLog(t, logs, cold.ID(), "cold start")
	runOn(t, cold, "print(1)")

	restored := snapshotAndRestore(t, rt, spec)
	waitBootLog(t, logs, restored.ID(), "restore")
	runOn(t, restored, "print(1)")
}

// waitBootLog waits until the boot log of sandbox id holds both GC lines,
// in order. The second is written by the Sentry beside the application,
// after the kernel starts, so it may come a little after the sandbox
// answers.
func waitBootLog(t *testing.T, dir, id, what string) {
	t.Helper()
	last, ok := pollBootLog(t, dir, id, func(text string) bool {
		slowed, restored := strings.Index(text, gcSlowed), strings.Index(text, gcRestored)
		return slowed >= 0 && restored > slowed
	})
	switch {
	case ok:
	case last == "":
		t.Fatalf("%s: no boot log names sandbox %s in %s", what, id, dir)
	default:
		t.Fatalf("%s: the boot log of %s lacks %q or %q after it (runsc not built by deploy/runsc/build.sh?)", what, id, gcSlowed, gcRestored)
	}
}

// pollBootLog reads the boot log of sandbox id until holds says it has
// what the caller waits for, for at most a minute (or until the test's
// deadline). It returns the last text read and whether holds said yes.
func pollBootLog(t *testing.T, dir, id string, holds func(text string) bool) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	for {
		text := bootLog(t, dir, id)
		if holds(text) {
			return text, true
		}
		select {
		case <-ctx.Done():
			return text, false
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// bootLog returns the text of the boot log whose command line names id.
func bootLog(t *testing.T, dir, id string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.boot.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if text := string(b); strings.Contains(text, " "+id+"]") {
			return text
		}
	}
	return ""
}
