package rootfs

import (
	"context"
	"errors"
	"github.com/paddock-dev/paddock/internal/filelock"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fakeMmdebstrap writes a shell script that stands in for mmdebstrap: it
// logs its arguments to runs, checks that stub packages exist, then acts
// out mode ("ok", "slow", "fail" or "hang") and lays out a tiny tree.
// "slow" stays silent until a file named release appears next to runs.
func fakeMmdebstrap(t *testing.T, mode string) (bin, runs string) {
	t.Helper()
	dir := t.TempDir()
	bin, runs = filepath.Join(dir, "mmdebstrap"), filepath.Join(dir, "runs")
	script := `#!/bin/sh
echo "$*" >> ` + runs + `
next=
for a in "$@"; do
	case $next in
	suite) next=target; continue ;;
	target) target=$a; break ;;
	esac
	case $a in
	--) next=suite ;;
	--include=/*) test -f "${a#--include=}" || { echo "E: missing ${a#--include=}" >&2; exit 3; } ;;
	esac
done
echo "I: fake mmdebstrap into $target" >&2
case ` + mode + ` in
fail) echo "E: Unable to locate package nodejs" >&2; exit 1 ;;
slow) while [ ! -e ` + filepath.Join(dir, "release") + ` ]; do sleep 0.01; done ;;
hang) trap 'echo "I: cleaning up after TERM" >&2; exit 143' TERM; echo "I: hanging" >&2; while :; do sleep 0.02; done ;;
esac
mkdir -p "$target/etc" "$target/tmp" "$target/opt" "$target/usr/bin"
printf 'root:x:0:0:root:/root:/bin/bash\n' > "$target/etc/passwd"
printf 'root:x:0:\n' > "$target/etc/group"
printf 'root:*:20000:0:99999:7:::\n' > "$target/etc/shadow"
echo '#!/bin/sh' > "$target/usr/bin/node"
echo "I: success" >&2
`
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, runs
}

func countRuns(t *testing.T, runs string) int {
	t.Helper()
	data, err := os.ReadFile(runs)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), "\n")
}

// cacheEntries lists CacheDir/rootfs.
func cacheEntries(t *testing.T, cache string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(cache, "rootfs"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func testBuilder(t *testing.T, mode string) (*Builder, *syncBuffer, string) {
	t.Helper()
	requireRoot(t)
	bin, runs := fakeMmdebstrap(t, mode)
	out := &syncBuffer{}
	return &Builder{
		CacheDir:   t.TempDir(),
		Progress:   out,
		aptDir:     "testdata/apt-deb822",
		mmdebstrap: bin,
	}, out, runs
}

func TestEnsureBuildsOnce(t *testing.T) {
	b, out, runs := testBuilder(t, "slow")
	b.heartbeat = 60 * time.Millisecond
	tmpl := tinyTemplate
	tmpl.StubPackages = []string{"unicode-data"}

	var wg sync.WaitGroup
	paths := make([]string, 5)
	errs := make([]error, 5)
	for i := range 5 {
		wg.Go(func() {
			img, err := b.Ensure(t.Context(), tmpl)
			paths[i], errs[i] = img.Path, err
		})
	}
	// The build stays silent until the heartbeat has spoken, however long
	// that takes; the bound only ends a test whose heartbeat never does.
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(out.String(), "still building, ") {
		if time.Now().After(deadline) {
			t.Fatalf("no heartbeat in a minute of silence at 60ms:\n%s", out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	writeFile(t, filepath.Join(filepath.Dir(runs), "release"), "")
	wg.Wait()
	want := filepath.Join(b.CacheDir, "rootfs/node-cf737b8d6bba1599/rootfs")
	for i := range 5 {
		if errs[i] != nil || paths[i] != want {
			t.Errorf("Ensure #%d = %q, %v; want %q", i, paths[i], errs[i], want)
		}
	}
	if n := countRuns(t, runs); n != 1 {
		t.Errorf("mmdebstrap ran %d times, want 1", n)
	}
	if _, err := b.Ensure(t.Context(), tmpl); err != nil || countRuns(t, runs) != 1 {
		t.Errorf("second Ensure = %v after %d runs, want the cached image", err, countRuns(t, runs))
	}
	// A template of another name with the same packages (python-slim
	// beside python) gets the same image, not a build of its own.
	twin := tmpl
	twin.Name, twin.Warmup = "tiny-twin", "require('zlib')"
	if img, err := b.Ensure(t.Context(), twin); err != nil || img.Path != want || countRuns(t, runs) != 1 {
		t.Errorf("Ensure(twin) = %q, %v after %d runs, want %q and no build", img.Path, err, countRuns(t, runs), want)
	}
	if got, want := cacheEntries(t, b.CacheDir), []string{"node-cf737b8d6bba1599", "node-cf737b8d6bba1599.lock"}; !slices.Equal(got, want) {
		t.Errorf("cache holds %v, want %v", got, want)
	}
	fi, err := os.Stat(filepath.Join(want, "workspace"))
	if err != nil || fi.Sys().(*syscall.Stat_t).Uid != 1000 {
		t.Errorf("workspace not owned by uid 1000: %v", err)
	}

	got := out.String()
	for _, line := range []string{
		"[rootfs tiny] building node-cf737b8d6bba1599: 1 packages, 1 stubs; the host's apt sources list bookworm\n",
		"[rootfs tiny] sources: deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main; " +
			"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm-updates main; " +
			"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security bookworm-security main\n",
		"[rootfs tiny] I: fake mmdebstrap into " + filepath.Join(b.CacheDir, "rootfs/node-cf737b8d6bba1599.tmp-"),
		"[rootfs tiny] still building, ",
		"[rootfs tiny] I: success\n",
		"[rootfs tiny] built in ",
	} {
		if !strings.Contains(got, line) {
			t.Errorf("progress lacks %q:\n%s", line, got)
		}
	}
}

func TestEnsureFailureLeavesNothing(t *testing.T) {
	b, _, _ := testBuilder(t, "fail")
	_, err := b.Ensure(t.Context(), tinyTemplate)
	if err == nil || !strings.Contains(err.Error(), "E: Unable to locate package nodejs") {
		t.Fatalf("Ensure = %v, want mmdebstrap's error", err)
	}
	if _, err := b.Lookup(tinyTemplate); !errors.Is(err, ErrNotBuilt) {
		t.Errorf("Lookup after a failed build = %v, want ErrNotBuilt", err)
	}
	if got, want := cacheEntries(t, b.CacheDir), []string{"node-a9d95862e7d94a2a.lock"}; !slices.Equal(got, want) {
		t.Errorf("cache holds %v, want %v", got, want)
	}
}

func TestEnsureCancelled(t *testing.T) {
	b, out, _ := testBuilder(t, "hang")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// Cancel once the stand-in has set its TERM handler and hangs, not
	// after a duration a busy machine might not reach it in.
	go func() {
		for !strings.Contains(out.String(), "I: hanging") {
			select {
			case <-ctx.Done():
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
		cancel()
	}()
	_, err := b.Ensure(ctx, tinyTemplate)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Ensure = %v, want Canceled", err)
	}
	if !strings.Contains(out.String(), "I: cleaning up after TERM") {
		t.Errorf("mmdebstrap was not asked to clean up:\n%s", out.String())
	}
	if got, want := cacheEntries(t, b.CacheDir), []string{"node-a9d95862e7d94a2a.lock"}; !slices.Equal(got, want) {
		t.Errorf("cache holds %v, want %v", got, want)
	}
}

func TestEnsureRemovesStaleBuilds(t *testing.T) {
	b, _, runs := testBuilder(t, "ok")
	for _, dir := range []string{"node-a9d95862e7d94a2a.tmp-999/rootfs/etc", "node-a9d95862e7d94a2a/rootfs/etc", "other-0123456789abcdef.tmp-1"} {
		if err := os.MkdirAll(filepath.Join(b.CacheDir, "rootfs", dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Ensure(t.Context(), tinyTemplate); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	if countRuns(t, runs) != 1 {
		t.Errorf("mmdebstrap ran %d times, want 1", countRuns(t, runs))
	}
	want := []string{"node-a9d95862e7d94a2a", "node-a9d95862e7d94a2a.lock", "other-0123456789abcdef.tmp-1"}
	if got := cacheEntries(t, b.CacheDir); !slices.Equal(got, want) {
		t.Errorf("cache holds %v, want %v", got, want)
	}
}

// TestEnsureWaitsForAnotherProcess holds the image's lock as another
// process would, finishes "its" build, and checks that Ensure waited and
// took that image instead of building.
func TestEnsureWaitsForAnotherProcess(t *testing.T) {
	b, out, runs := testBuilder(t, "ok")
	if err := os.MkdirAll(filepath.Join(b.CacheDir, "rootfs"), 0o755); err != nil {
		t.Fatal(err)
	}
	lock, err := filelock.Acquire(t.Context(), filepath.Join(b.CacheDir, "rootfs/node-a9d95862e7d94a2a.lock"), filelock.Exclusive, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := b.Ensure(t.Context(), tinyTemplate)
		done <- err
	}()
	for !strings.Contains(out.String(), "waiting for another build of node-a9d95862e7d94a2a") {
		select {
		case err := <-done:
			t.Fatalf("Ensure returned %v while the lock was held", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	image := filepath.Join(b.CacheDir, "rootfs/node-a9d95862e7d94a2a")
	writeFile(t, filepath.Join(image, "image.json"), `{"template":"tiny","key":"a9d95862e7d94a2a"}`)
	if err := os.Mkdir(filepath.Join(image, "rootfs"), 0o755); err != nil {
		t.Fatal(err)
	}
	lock.Release()
	if err := <-done; err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	if n := countRuns(t, runs); n != 0 {
		t.Errorf("mmdebstrap ran %d times, want 0", n)
	}
}

func TestEnsureWithoutMmdebstrap(t *testing.T) {
	requireRoot(t)
	t.Setenv("PATH", t.TempDir())
	b := &Builder{CacheDir: t.TempDir(), aptDir: "testdata/apt-deb822"}
	if _, err := b.Ensure(t.Context(), tinyTemplate); !errors.Is(err, ErrNoMmdebstrap) ||
		!strings.Contains(err.Error(), "apt-get install -y mmdebstrap") {
		t.Errorf("Ensure = %v, want ErrNoMmdebstrap saying how to install it", err)
	}
}

func TestEnsureRejectsInvalidTemplate(t *testing.T) {
	b := &Builder{CacheDir: t.TempDir()}
	tmpl := tinyTemplate
	tmpl.Packages = nil
	if _, err := b.Ensure(t.Context(), tmpl); err == nil || !strings.Contains(err.Error(), "no packages") {
		t.Errorf("Ensure = %v, want a validation error", err)
	}
}
