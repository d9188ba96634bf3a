package rootfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/paddock-dev/paddock/internal/prereq"
)

func requireRoot(t *testing.T) {
	t.Helper()
	prereq.Root(t, "(the build chowns files)")
}

// fakeTree lays out the parts of a Debian tree that customize touches.
func fakeTree(t *testing.T) string {
	t.Helper()
	tree := t.TempDir()
	files := map[string]string{
		"etc/passwd":      "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
		"etc/group":       "root:x:0:\nshadow:x:42:\nnogroup:x:65534:\n",
		"etc/shadow":      "root:*:20000:0:99999:7:::\nnobody:*:20000:0:99999:7:::\n",
		"etc/gshadow":     "root:*::\nshadow:*::\n",
		"etc/hostname":    "buildhost\n",
		"tmp/leftover":    "x",
		"usr/bin/su":      "#!/bin/sh\n",
		"var/tmp/.keep":   "",
		"var/log/wtmp":    "",
		"usr/lib/os-info": "debian\n",
		"usr/lib/python3/dist-packages/numpy/__init__.py":             "",
		"usr/lib/python3/dist-packages/numpy/tests/test_numpy.py":     "",
		"usr/lib/python3/dist-packages/numpy/linalg/tests/data/x.npy": "",
		"usr/lib/python3/dist-packages/numpy/linalg/linalg.py":        "",
		"usr/lib/python3/dist-packages/numpy/testing/__init__.py":     "",
		"usr/lib/python3/dist-packages/tests/__init__.py":             "",
		"usr/lib/python3/dist-packages/numpy/tests/__pycache__/t.pyc": "",
		"usr/lib/python3/dist-packages/numpy-1.24.2.egg-info/tests":   "",
	}
	for name, content := range files {
		writeFile(t, filepath.Join(tree, name), content)
	}
	chmod := map[string]fs.FileMode{
		"etc/shadow":   0o640,
		"etc/hostname": 0o755,
		"usr/bin/su":   0o755 | fs.ModeSetuid,
		"var/tmp":      0o777 | fs.ModeSticky,
		"var/log/wtmp": 0o666,
	}
	for name, mode := range chmod {
		if err := os.Chmod(filepath.Join(tree, name), mode); err != nil {
			t.Fatal(err)
		}
	}
	// The host's resolver, as mmdebstrap copies it, and a symlink that
	// would escape the tree.
	if err := os.Symlink("/etc/hosts", filepath.Join(tree, "etc/resolv.conf")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(filepath.Join(tree, "usr/lib/os-info"), 1000, 1000); err != nil {
		t.Fatal(err)
	}
	return tree
}

func TestCustomize(t *testing.T) {
	requireRoot(t)
	tree := fakeTree(t)
	if err := customize(tree); err != nil {
		t.Fatalf("customize: %v", err)
	}
	files := []struct {
		name string
		want string
	}{
		{"etc/passwd", "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\nsandbox:x:1000:1000:Paddock sandbox:/workspace:/bin/bash\n"},
		{"etc/group", "root:x:0:\nshadow:x:42:\nnogroup:x:65534:\nsandbox:x:1000:\n"},
		{"etc/shadow", "root:*:20000:0:99999:7:::\nnobody:*:20000:0:99999:7:::\nsandbox:*::0:99999:7:::\n"},
		{"etc/gshadow", "root:*::\nshadow:*::\nsandbox:!::\n"},
		{"etc/hostname", "sandbox\n"},
		{"etc/hosts", "127.0.0.1\tlocalhost\n127.0.1.1\tsandbox\n::1\tlocalhost ip6-localhost ip6-loopback\n"},
		{"etc/resolv.conf", "# Paddock sandboxes have no network unless their runtime provides one.\n"},
	}
	for _, f := range files {
		got, err := os.ReadFile(filepath.Join(tree, f.name))
		if err != nil || string(got) != f.want {
			t.Errorf("%s = %q, %v; want %q", f.name, got, err, f.want)
		}
	}
	modes := []struct {
		name     string
		mode     fs.FileMode
		uid, gid uint32
	}{
		{"workspace", fs.ModeDir | 0o755, 1000, 1000},
		{"opt/paddock", fs.ModeDir | 0o755, 0, 0},
		{"tmp", fs.ModeDir | fs.ModeSticky | 0o777, 0, 0},
		{"var/tmp", fs.ModeDir | 0o775, 0, 0},
		{"var/log/wtmp", 0o664, 0, 0},
		{"usr/bin/su", 0o755, 0, 0},
		{"usr/lib/os-info", 0o644, 0, 0},
		{"etc/shadow", 0o640, 0, 0},
		{"etc/hostname", 0o644, 0, 0},
		{"etc/resolv.conf", 0o644, 0, 0},
	}
	for _, m := range modes {
		fi, err := os.Lstat(filepath.Join(tree, m.name))
		if err != nil {
			t.Errorf("%s: %v", m.name, err)
			continue
		}
		st := fi.Sys().(*syscall.Stat_t)
		if fi.Mode() != m.mode || st.Uid != m.uid || st.Gid != m.gid {
			t.Errorf("%s: mode %v owner %d:%d, want %v %d:%d", m.name, fi.Mode(), st.Uid, st.Gid, m.mode, m.uid, m.gid)
		}
	}
	for _, f := range []struct {
		name string
		kept bool
	}{
		{"usr/lib/python3/dist-packages/numpy/__init__.py", true},
		{"usr/lib/python3/dist-packages/numpy/linalg/linalg.py", true},
		{"usr/lib/python3/dist-packages/numpy/testing/__init__.py", true},
		{"usr/lib/python3/dist-packages/tests/__init__.py", true},
		{"usr/lib/python3/dist-packages/numpy-1.24.2.egg-info/tests", true},
		{"usr/lib/python3/dist-packages/numpy/tests", false},
		{"usr/lib/python3/dist-packages/numpy/linalg/tests", false},
	} {
		_, err := os.Lstat(filepath.Join(tree, f.name))
		if kept := err == nil; kept != f.kept {
			t.Errorf("%s: kept = %v, want %v", f.name, kept, f.kept)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(tree, "tmp")); len(entries) != 0 {
		t.Errorf("tmp not emptied: %v", entries)
	}
	if host, _ := os.ReadFile("/etc/hosts"); strings.Contains(string(host), "Paddock sandboxes") {
		t.Fatalf("customize wrote through a symlink to the host's /etc/hosts")
	}
}

func TestCustomizeIsIdempotent(t *testing.T) {
	requireRoot(t)
	tree := fakeTree(t)
	for range 2 {
		if err := customize(tree); err != nil {
			t.Fatalf("customize: %v", err)
		}
	}
	got, err := os.ReadFile(filepath.Join(tree, "etc/passwd"))
	if err != nil || strings.Count(string(got), "\nsandbox:x:1000:") != 1 {
		t.Errorf("etc/passwd after two runs = %q, %v; want one sandbox entry", got, err)
	}
}

func TestCustomizeRefusesTakenUID(t *testing.T) {
	requireRoot(t)
	tree := fakeTree(t)
	writeFile(t, filepath.Join(tree, "etc/passwd"), "root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000::/home/alice:/bin/sh\n")
	err := customize(tree)
	if err == nil || !strings.Contains(err.Error(), "id 1000 already belongs to alice") {
		t.Errorf("customize = %v, want an error naming alice", err)
	}
}

// A tree with a Python gets pip's configuration and the sandbox user's
// site directory, owned by that user; fakeTree has none and gets neither.
func TestCustomizePipUserSite(t *testing.T) {
	requireRoot(t)
	bare := fakeTree(t)
	if err := customize(bare); err != nil {
		t.Fatalf("customize: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(bare, "etc/pip.conf")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a tree without Python has etc/pip.conf: %v", err)
	}
	tree := fakeTree(t)
	if err := os.MkdirAll(filepath.Join(tree, "usr/lib/python3.11"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "usr/lib/python3.11/site.py"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := customize(tree); err != nil {
		t.Fatalf("customize: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(tree, "etc/pip.conf")); err != nil || !strings.Contains(string(b), "break-system-packages = true") {
		t.Errorf("etc/pip.conf = %q, %v", b, err)
	}
	for _, dir := range []string{"workspace/.local", "workspace/.local/lib/python3.11/site-packages"} {
		fi, err := os.Lstat(filepath.Join(tree, dir))
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			continue
		}
		if st := fi.Sys().(*syscall.Stat_t); !fi.IsDir() || fi.Mode().Perm() != 0o755 || st.Uid != 1000 || st.Gid != 1000 {
			t.Errorf("%s: mode %v owner %d:%d, want a directory 0755 of 1000:1000", dir, fi.Mode(), st.Uid, st.Gid)
		}
	}
}
