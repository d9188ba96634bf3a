package runsc_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runsc"
)

// snapshotRuntime is a second runtime on e's binaries with its own state
// directory and the given snapshot directory.
func snapshotRuntime(t *testing.T, e *realEnv, snapDir string) *runsc.Runtime {
	t.Helper()
	return ownRuntime(t, e, runsc.Config{SnapshotDir: snapDir,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
}

// ownRuntime is a runtime of its own on e's runsc and agent, with a fresh
// state directory and the rest of cfg. The test fails if it leaves a
// sandbox behind.
func ownRuntime(t *testing.T, e *realEnv, cfg runsc.Config) *runsc.Runtime {
	t.Helper()
	cfg.Runsc, cfg.Agent, cfg.StateDir = e.runsc, os.Getenv("PADDOCK_AGENT"), t.TempDir()
	rt, err := runsc.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if n, err := rt.Cleanup(context.Background()); n > 0 || err != nil {
			t.Errorf("%d sandboxes left behind (cleanup error: %v)", n, err)
		}
		if err := rt.Close(); err != nil {
			t.Errorf("closing the runtime: %v", err)
		}
	})
	return rt
}

// snapshotAndRestore snapshots spec on rt and restores one sandbox from
// the image.
func snapshotAndRestore(t *testing.T, rt *runsc.Runtime, spec runner.Spec) runner.Sandbox {
	t.Helper()
	img, err := rt.Snapshot(t.Context(), spec)
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	sb, err := rt.Restore(t.Context(), img)
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	return sb
}

func runOn(t *testing.T, sb runner.Sandbox, code string) runner.RunResult {
	t.Helper()
	defer sb.Destroy(context.Background())
	res, err := sb.Run(t.Context(), runner.RunRequest{Code: code, Timeout: 20 * time.Second, MaxStdout: 1 << 20, MaxStderr: 1 << 20}, nil)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if res.Reason != runner.ReasonOK {
		t.Fatalf("run: reason %s, stderr %q", res.Reason, res.Stderr)
	}
	return res
}

// TestGVisorSnapshotRestore builds an image of a Python sandbox whose
// warm-up imports numpy and ssl, restores it twice into runtimes with
// other state directories, and checks that the clones start warm and do
// not share random numbers.
func TestGVisorSnapshotRestore(t *testing.T) {
	e := newRealEnv(t)
	snapDir := t.TempDir()
	builder := snapshotRuntime(t, e, snapDir)
	spec := e.specs["python"]
	spec.Warmup = "import random, ssl, tempfile, numpy\nssl.RAND_bytes(8)\nrandom.random()\nWARMED = 42"
	spec.RootfsID = "test-rootfs"

	img, err := builder.Snapshot(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if !img.Built || img.Bytes == 0 || !strings.HasPrefix(filepath.Base(img.Path), "python-") {
		t.Fatalf("first Snapshot: %+v, want a built image", img)
	}
	again, err := builder.Snapshot(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if again.Built || again.Key != img.Key {
		t.Fatalf("second Snapshot built again or changed key: %+v vs %+v", again, img)
	}
	other := spec
	other.RootfsID = "another-build"
	if k := keyOf(t, builder, other); k == img.Key {
		t.Fatalf("another rootfs build kept the key %s", k)
	}

	probe := "import sys, random, numpy, ssl, tempfile\n" +
		"print('numpy' in sys.modules, random.random(), numpy.random.rand(), ssl.RAND_bytes(8).hex(), next(tempfile._get_candidate_names()))"
	seen := map[string]bool{}
	for i := range 2 {
		rt := snapshotRuntime(t, e, snapDir) // another server, another state directory
		sb, err := rt.Restore(t.Context(), img)
		if err != nil {
			t.Fatalf("restore %d: %v", i, err)
		}
		out := strings.Fields(string(runOn(t, sb, probe).Stdout))
		if len(out) != 5 || out[0] != "True" {
			t.Fatalf("restore %d printed %q, want numpy already imported and four values", i, out)
		}
		for j, v := range out[1:] {
			if seen[v] {
				t.Errorf("value %d (%s) repeated across clones: %q", j, v, out)
			}
			seen[v] = true
		}
	}
}

func keyOf(t *testing.T, rt *runsc.Runtime, spec runner.Spec) string {
	t.Helper()
	k, err := rt.SnapshotKey(spec)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestGVisorSnapshotMissingAndCorrupt checks the two ways an image goes
// bad: gone (ErrSnapshotMissing, so the caller rebuilds) and corrupt (an
// error, not a hang or a half-made sandbox).
func TestGVisorSnapshotMissingAndCorrupt(t *testing.T) {
	e := newRealEnv(t)
	snapDir := t.TempDir()
	rt := snapshotRuntime(t, e, snapDir)
	spec := e.specs["python"]
	spec.Warmup = "import json"
	img, err := rt.Snapshot(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"pages.img", "checkpoint.img"} {
		if err := os.WriteFile(filepath.Join(img.Path, name), []byte("not an image"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if sb, err := rt.Restore(t.Context(), img); err == nil {
		sb.Destroy(context.Background())
		t.Fatal("restoring a corrupt image succeeded")
	} else if errors.Is(err, runner.ErrSnapshotMissing) {
		t.Fatalf("corrupt image reported missing: %v", err)
	}

	if err := os.RemoveAll(img.Path); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Restore(t.Context(), img); !errors.Is(err, runner.ErrSnapshotMissing) {
		t.Fatalf("restoring a deleted image: %v, want ErrSnapshotMissing", err)
	}
	rebuilt, err := rt.Snapshot(t.Context(), spec)
	if err != nil || !rebuilt.Built {
		t.Fatalf("Snapshot after delete: %+v, %v; want a rebuild", rebuilt, err)
	}
	sb, err := rt.Restore(t.Context(), rebuilt)
	if err != nil {
		t.Fatal(err)
	}
	if out := string(runOn(t, sb, "print('json' in __import__('sys').modules)").Stdout); out != "True\n" {
		t.Fatalf("rebuilt image printed %q", out)
	}

	// A new rootfs build gives a new key; the outdated image goes.
	spec.RootfsID = "next-build"
	next, err := rt.Snapshot(t.Context(), spec)
	if err != nil || !next.Built || next.Path == rebuilt.Path {
		t.Fatalf("Snapshot of a new rootfs build: %+v, %v; want a new image", next, err)
	}
	if _, err := os.Stat(rebuilt.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the outdated image %s is still there (stat: %v)", rebuilt.Path, err)
	}
	if left, _ := filepath.Glob(filepath.Join(snapDir, ".build-*")); len(left) > 0 {
		t.Errorf("build directories left behind: %v", left)
	}
}
