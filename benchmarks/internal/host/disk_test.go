package host

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestDiskUsage counts allocated blocks, as du does: a written MiB counts,
// a sparse file's holes and a second link to the same file do not.
func TestDiskUsage(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "image")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(sub, "pages.img")
	if err := os.WriteFile(data, bytes.Repeat([]byte{0xa5}, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	before, err := DiskUsage(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The MiB, plus the two directories' blocks and at most a block of
	// rounding: well under 1 MiB + 64 KiB on any file system.
	if before < 1<<20 || before > 1<<20+64<<10 {
		t.Fatalf("usage %d bytes, want 1 MiB and a little", before)
	}
	if err := os.Link(data, filepath.Join(dir, "again.img")); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(sub, "sparse.img"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	after, err := DiskUsage(dir)
	if err != nil {
		t.Fatal(err)
	}
	if after < before || after > before+64<<10 {
		t.Errorf("usage %d bytes with a second link and a 64 MiB hole, want about %d", after, before)
	}
	if _, err := DiskUsage(filepath.Join(dir, "none")); err == nil {
		t.Error("the usage of a missing directory")
	}
	free, err := DiskFree(dir)
	if err != nil || free == 0 {
		t.Errorf("free space %d, %v", free, err)
	}
}
