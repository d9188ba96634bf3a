package runsc

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// makerScript stands in for mkfs.erofs: it writes a 4 KiB image to its
// next-to-last argument and logs its last (the directory) in calls. For a
// directory named slow it first opens the started FIFO for writing (which
// waits for the test to read it) and then reads the gate FIFO (which waits
// for the test to write it), so the test decides when that image is done.
const makerScript = `#!/bin/sh
for a; do tmp=$dir; dir=$a; done
echo "$dir" >> "$(dirname "$dir")/calls"
case "$dir" in
*/slow) echo go > "$(dirname "$dir")/started"; read line < "$(dirname "$dir")/gate" ;;
esac
head -c 4096 /dev/zero > "$tmp"
`

// TestImagesOfTemplatesAreMadeApart: while one root filesystem's image is
// being made, another's is made and returned without waiting for it, and a
// second asker of the first image waits for the one maker and gets its
// image.
func TestImagesOfTemplatesAreMadeApart(t *testing.T) {
	dir := t.TempDir()
	maker := filepath.Join(dir, "mkfs")
	if err := os.WriteFile(maker, []byte(makerScript), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, fifo := range []string{"started", "gate"} {
		if err := syscall.Mkfifo(filepath.Join(dir, fifo), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Should the test end early, the slow maker is let go rather than
	// left waiting on the gate (no reader: ENXIO, nothing to do).
	t.Cleanup(func() {
		if f, err := os.OpenFile(filepath.Join(dir, "gate"), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_, _ = f.WriteString("done\n")
			_ = f.Close()
		}
	})
	slow, fast := filepath.Join(dir, "slow"), filepath.Join(dir, "fast")
	for _, d := range []string{slow, fast} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	im := &images{mkfs: maker, roots: map[string]*rootImage{}}
	ctx := context.Background()

	type result struct {
		img image
		err error
	}
	slowDone := make(chan result, 2)
	for range 2 {
		go func() {
			img, err := im.root(ctx, slow)
			slowDone <- result{img, err}
		}()
	}
	started, err := os.ReadFile(filepath.Join(dir, "started")) // the slow maker is running
	if err != nil || strings.TrimSpace(string(started)) != "go" {
		t.Fatalf("reading started: %q, %v", started, err)
	}

	fastDone := make(chan result, 1)
	go func() {
		img, err := im.root(ctx, fast)
		fastDone <- result{img, err}
	}()
	// A bound on a hang, not on speed: the fast image takes a shell
	// script's run; behind the slow one it would wait for ever.
	select {
	case r := <-fastDone:
		if r.err != nil || r.img.Path != fast+".erofs" {
			t.Fatalf("fast image: %+v, %v", r.img, r.err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the second template's image waited behind the first's")
	}
	select {
	case r := <-slowDone:
		t.Fatalf("the slow image returned before its maker finished: %+v, %v", r.img, r.err)
	default:
	}

	if err := os.WriteFile(filepath.Join(dir, "gate"), []byte("done\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		r := <-slowDone
		if r.err != nil || r.img.Path != slow+".erofs" || r.img.Superblock == "" {
			t.Fatalf("slow image: %+v, %v", r.img, r.err)
		}
	}
	calls, err := os.ReadFile(filepath.Join(dir, "calls"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(calls)); len(got) != 2 {
		t.Errorf("mkfs ran for %v, want once for each directory", got)
	}
}
