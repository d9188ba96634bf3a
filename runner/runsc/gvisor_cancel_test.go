package runsc_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner/runsc"
)

// lockedBuffer is a bytes.Buffer safe for a logger shared by goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A start abandoned at any point (here: during create, start or the
// agent's hello) leaves nothing on the host: no container, no file under
// runsc's root, no host process, no host cgroup; and Close unpins the null
// network namespace so the state directory can be removed. (A `runsc
// create` killed halfway used to leave its cgroups, and at times its
// sandbox and gofer processes, where no `runsc list` finds them.)
func TestGVisorCancelledStartLeavesNothing(t *testing.T) {
	e := newRealEnv(t) // skips without gVisor; provides the specs
	state, err := os.MkdirTemp("", "pdc-")
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	rt, err := runsc.New(runsc.Config{Runsc: e.runsc, StateDir: state, Agent: os.Getenv("PADDOCK_AGENT"),
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	for _, after := range []time.Duration{time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond,
		80 * time.Millisecond, 120 * time.Millisecond, 200 * time.Millisecond} {
		ctx, cancel := context.WithTimeout(t.Context(), after)
		sb, err := rt.Start(ctx, e.specs["python"])
		cancel()
		if err == nil {
			if err := sb.Destroy(t.Context()); err != nil {
				t.Errorf("destroy: %v", err)
			}
		}
	}

	ids := slices.Compact(slices.Sorted(slices.Values(regexp.MustCompile(`pd-[0-9a-f]{16}`).FindAllString(logs.String(), -1))))
	if len(ids) == 0 {
		t.Fatalf("no sandbox was created; log:\n%s", logs.String())
	}
	root := filepath.Join(state, "runsc")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, ent := range entries {
		if ent.Name() != "null-netns" {
			t.Errorf("left under runsc's root: %s", ent.Name())
		}
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, id := range ids {
		for _, p := range procs {
			if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(id)) {
				t.Errorf("host process %s of %s left: %q", filepath.Base(filepath.Dir(p)), id, b)
			}
		}
		for _, pattern := range []string{"/sys/fs/cgroup/*/paddock/" + id, "/sys/fs/cgroup/paddock/" + id} {
			if left, _ := filepath.Glob(pattern); len(left) > 0 {
				t.Errorf("host cgroups of %s left: %v", id, left)
			}
		}
	}
	if err := rt.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := os.RemoveAll(state); err != nil {
		t.Errorf("removing the state directory after Close: %v", err)
	}
}
