package rootfs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/paddock-dev/paddock/internal/prereq"
)

func TestUnescapeMountPath(t *testing.T) {
	tests := []struct{ in, want string }{
		{`/var/cache/paddock`, `/var/cache/paddock`},
		{`/mnt/my\040disk`, `/mnt/my disk`},
		{`/a\134b`, `/a\b`},
		{`/trailing\04`, `/trailing\04`},
	}
	for _, tt := range tests {
		if got := unescapeMountPath(tt.in); got != tt.want {
			t.Errorf("unescapeMountPath(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRemoveTree(t *testing.T) {
	prereq.Root(t, "(only root empties the tree's read-only directory, as builds run)")
	dir := filepath.Join(t.TempDir(), "build")
	writeFile(t, filepath.Join(dir, "rootfs/etc/passwd"), "root:x:0:0::/root:/bin/sh\n")
	if err := os.Symlink("/etc", filepath.Join(dir, "rootfs/hostetc")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "rootfs/etc"), 0o500); err != nil {
		t.Fatal(err)
	}
	if err := removeTree(dir); err != nil {
		t.Fatalf("removeTree: %v", err)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still exists: %v", dir, err)
	}
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Fatalf("removeTree followed a symlink out of the tree: %v", err)
	}
	if err := removeTree(dir); err != nil {
		t.Errorf("removeTree of a missing directory = %v, want nil", err)
	}
}

// TestRemoveTreeUnmountsLeftovers mounts a tmpfs inside a build directory,
// as a killed mmdebstrap leaves /proc or /dev, and checks that removeTree
// unmounts it instead of deleting through it.
func TestRemoveTreeUnmountsLeftovers(t *testing.T) {
	requireRoot(t)
	dir := filepath.Join(t.TempDir(), "build")
	mnt := filepath.Join(dir, "rootfs/proc")
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
		prereq.Missing(t, fmt.Sprintf("mounting a tmpfs: %v", err), "run the tests where root may mount (not in an unprivileged container)")
	}
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
	writeFile(t, filepath.Join(mnt, "on-tmpfs"), "x")
	if err := removeTree(dir); err != nil {
		t.Fatalf("removeTree: %v", err)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still exists: %v", dir, err)
	}
}

func TestRemoveSameDeviceRefusesOtherDevices(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "file"), "x")
	// Pretend the tree lives on another device: nothing may be removed.
	err := removeSameDevice(dir, 1<<62)
	if err == nil || !strings.Contains(err.Error(), "on another filesystem") {
		t.Fatalf("removeSameDevice = %v, want a refusal", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "file")); err != nil {
		t.Errorf("file removed despite the refusal: %v", err)
	}
}
