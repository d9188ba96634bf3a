package rootfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// The sandbox user. Its home is the working directory of every run. The
// runtimes render the same layout (runner/ocispec; layout_test.go binds
// the two).
const (
	sandboxUser = "sandbox"
	sandboxUID  = 1000
	sandboxGID  = 1000
	sandboxHome = "workspace" // relative to the tree's root
	agentDir    = "opt/paddock"
)

// Files written over whatever mmdebstrap copied from the host.
var etcFiles = []struct {
	name    string
	content string
}{
	{"etc/hostname", "sandbox\n"},
	{"etc/hosts", "127.0.0.1\tlocalhost\n127.0.1.1\tsandbox\n::1\tlocalhost ip6-localhost ip6-loopback\n"},
	// The host's resolver must not leak into sandboxes; a runtime that
	// gives a sandbox a network mounts its own resolv.conf.
	{"etc/resolv.conf", "# Paddock sandboxes have no network unless their runtime provides one.\n"},
}

// customize turns a fresh mmdebstrap tree into a sandbox root filesystem:
// the sandbox user and its home, the agent's mount point, host-neutral
// /etc files, an empty /tmp, no Python test suites, pip set to install
// into the sandbox user's site, then harden.
func customize(tree string) error {
	root, err := os.OpenRoot(tree)
	if err != nil {
		return fmt.Errorf("opening tree: %w", err)
	}
	defer root.Close()
	steps := []struct {
		what string
		do   func(*os.Root) error
	}{
		{"adding the sandbox user", addSandboxUser},
		{"creating directories", makeDirs},
		{"writing /etc files", writeEtcFiles},
		{"removing Python test suites", removePythonTests},
		{"letting pip install for the sandbox user", func(r *os.Root) error { return pipUserSite(tree, r) }},
	}
	for _, s := range steps {
		if err := s.do(root); err != nil {
			return fmt.Errorf("%s: %w", s.what, err)
		}
	}
	if err := harden(tree); err != nil {
		return fmt.Errorf("hardening: %w", err)
	}
	return nil
}

// addSandboxUser adds the sandbox user and group to the account files,
// replacing any earlier entry of that name.
func addSandboxUser(root *os.Root) error {
	entries := []struct {
		file, line string
		idField    int // field holding the numeric id, or -1
		optional   bool
	}{
		{"etc/passwd", fmt.Sprintf("%s:x:%d:%d:Paddock sandbox:/%s:/bin/bash", sandboxUser, sandboxUID, sandboxGID, sandboxHome), 2, false},
		{"etc/group", fmt.Sprintf("%s:x:%d:", sandboxUser, sandboxGID), 2, false},
		{"etc/shadow", sandboxUser + ":*::0:99999:7:::", -1, false},
		{"etc/gshadow", sandboxUser + ":!::", -1, true},
	}
	for _, e := range entries {
		if err := setAccountLine(root, e.file, e.line, e.idField, e.optional); err != nil {
			return err
		}
	}
	return nil
}

// setAccountLine replaces or appends the line of the account named by
// line's first field in file, keeping the file's mode and owner. When
// idField is set, another account with the same id is an error.
func setAccountLine(root *os.Root, file, line string, idField int, optional bool) error {
	data, err := root.ReadFile(file)
	if optional && errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	fields := strings.Split(line, ":")
	var out []string
	for _, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		f := strings.Split(l, ":")
		switch {
		case l == "":
			continue
		case f[0] == fields[0]:
			continue
		case idField >= 0 && len(f) > idField && f[idField] == fields[idField]:
			return fmt.Errorf("%s: id %s already belongs to %s", file, f[idField], f[0])
		}
		out = append(out, l)
	}
	out = append(out, line)
	fh, err := root.OpenFile(file, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, werr := fh.WriteString(strings.Join(out, "\n") + "\n")
	return errors.Join(werr, fh.Close())
}

// makeDirs creates the sandbox user's home, the agent's mount point and a
// sticky, world-writable, empty /tmp.
func makeDirs(root *os.Root) error {
	if err := mkdirMode(root, sandboxHome, 0o755, sandboxUID, sandboxGID); err != nil {
		return err
	}
	if err := root.MkdirAll("opt", 0o755); err != nil {
		return err
	}
	if err := mkdirMode(root, agentDir, 0o755, 0, 0); err != nil {
		return err
	}
	if err := root.RemoveAll("tmp"); err != nil {
		return err
	}
	return mkdirMode(root, "tmp", 0o777|fs.ModeSticky, 0, 0)
}

// mkdirMode makes sure name is a directory with exactly mode, uid and gid.
func mkdirMode(root *os.Root, name string, mode fs.FileMode, uid, gid int) error {
	if err := root.Mkdir(name, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	if err := root.Lchown(name, uid, gid); err != nil {
		return err
	}
	return root.Chmod(name, mode)
}

// writeEtcFiles replaces the files in etcFiles, symlinks included.
func writeEtcFiles(root *os.Root) error {
	for _, f := range etcFiles {
		if err := root.Remove(f.name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := root.WriteFile(f.name, []byte(f.content), 0o644); err != nil {
			return err
		}
		if err := root.Chmod(f.name, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// pipConf lets pip install past Debian's externally-managed marker
// (PEP 668): a sandbox is thrown away or is one user's session, so
// there is no system to break. Not root, pip then installs into the
// user site, the sandbox user's home.
const pipConf = "# Paddock: pip installs into the sandbox user's site (~/.local).\n[global]\nbreak-system-packages = true\n"

// pipUserSite writes etc/pip.conf and makes the sandbox user's site
// directory of each Python in the tree, so that Python puts it on
// sys.path at start (it does only for one that exists) and a package
// pip installs imports in the same run, warm snapshots included. A tree
// without Python is left alone.
func pipUserSite(tree string, root *os.Root) error {
	pythons, err := filepath.Glob(filepath.Join(tree, "usr/lib/python3.*/site.py"))
	if err != nil || len(pythons) == 0 {
		return err
	}
	if err := root.WriteFile("etc/pip.conf", []byte(pipConf), 0o644); err != nil {
		return err
	}
	if err := root.Chmod("etc/pip.conf", 0o644); err != nil {
		return err
	}
	for _, site := range pythons {
		version := filepath.Base(filepath.Dir(site))
		dir := sandboxHome
		for _, part := range []string{".local", "lib", version, "site-packages"} {
			dir = path.Join(dir, part)
			if err := mkdirMode(root, dir, 0o755, sandboxUID, sandboxGID); err != nil {
				return err
			}
		}
	}
	return nil
}
