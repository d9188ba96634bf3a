package runsc

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner"
)

// fakeImage makes an image directory as runsc leaves one, as far as
// imageSize and Restore's first check look.
func fakeImage(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, imageMarker), []byte("state"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// runtimeOn is a runtime with only what the snapshot cache's bookkeeping
// needs: two of them on one directory stand for two servers sharing it
// (flock locks of separate opens conflict within a process too).
func runtimeOn(t *testing.T, snapDir string) *Runtime {
	t.Helper()
	runscBin := filepath.Join(t.TempDir(), "runsc")
	agent := filepath.Join(t.TempDir(), "paddock-agent")
	for _, f := range []string{runscBin, agent} {
		if err := os.WriteFile(f, []byte(filepath.Base(f)), 0o600); err != nil { // the same digests, so the same keys
			t.Fatal(err)
		}
	}
	rt := &Runtime{
		cfg:     Config{SnapshotDir: snapDir, StartTimeout: 5 * time.Second, Runsc: runscBin, Agent: agent, Platform: "systrap"},
		runsc:   &Runsc{Root: t.TempDir()},
		bundles: t.TempDir(), // a build's bundle goes here, not into the package directory
		log:     slog.New(slog.DiscardHandler),
	}
	t.Cleanup(func() { _ = rt.Close() })
	return rt
}

func exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Stat(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

// An image one server found in the cache cannot be dropped from under it
// by another server that failed to restore it: Drop leaves it and says
// so, until the first server lets go.
func TestDropLeavesAnImageAnotherServerUses(t *testing.T) {
	snapDir := t.TempDir()
	a, b := runtimeOn(t, snapDir), runtimeOn(t, snapDir)
	spec := runner.Spec{Language: "python", Template: "python"}
	key, err := a.SnapshotKey(spec)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(snapDir, "python-"+key)
	fakeImage(t, dir)
	imgA, err := a.Snapshot(t.Context(), spec)
	if err != nil || imgA.Built || imgA.Path != dir {
		t.Fatalf("a.Snapshot = %+v, %v; want the cached image at %s", imgA, err, dir)
	}
	imgB, err := b.Snapshot(t.Context(), spec)
	if err != nil || imgB.Path != dir {
		t.Fatalf("b.Snapshot = %+v, %v; want the same image", imgB, err)
	}

	if err := b.Drop(imgB); !errors.Is(err, runner.ErrSnapshotInUse) {
		t.Fatalf("b.Drop while a uses the image: %v, want ErrSnapshotInUse", err)
	}
	if !exists(t, dir) {
		t.Fatal("b.Drop removed the image a restores from")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Drop(imgB); err != nil {
		t.Fatalf("b.Drop once a has closed: %v", err)
	}
	if exists(t, dir) {
		t.Fatal("the image is still there after a Drop nobody else stood in the way of")
	}
}

// Pruning after a build removes the template's other keys only when no
// server uses them: an older server sharing the cache keeps its image.
func TestPruneSparesImagesInUse(t *testing.T) {
	snapDir := t.TempDir()
	older, newer := runtimeOn(t, snapDir), runtimeOn(t, snapDir)
	spec := runner.Spec{Language: "python", Template: "python"}
	key, err := older.SnapshotKey(spec)
	if err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(snapDir, "python-"+key)
	fakeImage(t, old)
	if _, err := older.Snapshot(t.Context(), spec); err != nil {
		t.Fatal(err)
	}
	abandoned := filepath.Join(snapDir, "python-00000000000000aa")
	fakeImage(t, abandoned)
	otherTemplate := filepath.Join(snapDir, "python-slim-00000000000000bb")
	fakeImage(t, otherTemplate)
	current := filepath.Join(snapDir, "python-00000000000000cc")
	fakeImage(t, current)

	newer.pruneSnapshots("python", current)
	if !exists(t, old) {
		t.Error("pruned the image the older server restores from")
	}
	if exists(t, abandoned) {
		t.Error("kept an outdated image nobody uses")
	}
	if !exists(t, otherTemplate) || !exists(t, current) {
		t.Error("pruned another template's image or the current one")
	}

	if err := older.Close(); err != nil {
		t.Fatal(err)
	}
	newer.pruneSnapshots("python", current)
	if exists(t, old) {
		t.Error("kept the older server's image after it closed")
	}
}

// A runtime that moves to a new key lets go of its own older image, so
// that its prune can remove it.
func TestPruneReleasesTheRuntimesOwnOldImage(t *testing.T) {
	snapDir := t.TempDir()
	rt := runtimeOn(t, snapDir)
	old := filepath.Join(snapDir, "python-00000000000000aa")
	fakeImage(t, old)
	if err := rt.holdImage(old); err != nil {
		t.Fatal(err)
	}
	rt.pruneSnapshots("python", filepath.Join(snapDir, "python-00000000000000cc"))
	if exists(t, old) {
		t.Error("the runtime's own outdated image survived its prune")
	}
}
