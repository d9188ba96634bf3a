package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"
)

// gVisor follows a symbolic link that openat(2) is asked to open with
// O_NOFOLLOW|O_DIRECTORY, where Linux refuses it. os.Root opens each
// directory of a path that way, so inside the sandbox a link planted by
// user code ("etc" -> "/etc") would lead a path out of the working
// directory. Every descriptor the file requests use is therefore checked
// where the kernel says it is (/proc/self/fd), and directories are
// created and entries renamed only relative to such a checked descriptor.

// Open writes beneath root, as uid and gid when chown is set.
func Open(root *os.Root, chown bool, uid, gid int) (Dir, error) {
	d, err := root.Open(".")
	if err != nil {
		return Dir{}, fmt.Errorf("opening workdir: %w", err)
	}
	defer d.Close()
	dir, err := FDPath(d)
	if err != nil {
		return Dir{}, fmt.Errorf("locating workdir: %w", err)
	}
	return Dir{root: root, dir: dir, chown: chown, uid: uid, gid: gid}, nil
}

// FDPath is where the kernel says f is.
func FDPath(f *os.File) (string, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return "", err
	}
	var p string
	var rerr error
	if err := rc.Control(func(fd uintptr) {
		p, rerr = os.Readlink("/proc/self/fd/" + strconv.FormatUint(uint64(fd), 10))
	}); err != nil {
		return "", err
	}
	return p, rerr
}

// confine returns f when it lies beneath the working directory; else it
// closes f and refuses the path p that led there.
func (w Dir) confine(f *os.File, p string) (*os.File, error) {
	at, err := FDPath(f)
	if err == nil && at != w.dir && !strings.HasPrefix(at, w.dir+"/") {
		err = fmt.Errorf("path %q resolves outside the working directory: %w", p, ErrBadPath)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// open opens p beneath root (see os.Root.OpenFile), confined.
func (w Dir) OpenFile(p string, flag int) (*os.File, error) {
	f, err := w.root.OpenFile(p, flag, 0)
	if err != nil {
		return nil, err
	}
	return w.confine(f, p)
}

// mkdirAll creates the missing directories of dir ("." is the working
// directory), owned by the user, and returns dir open.
func (w Dir) MkdirAll(dir string) (*os.File, error) {
	d, err := w.OpenFile(".", os.O_RDONLY|syscall.O_DIRECTORY)
	if err != nil || dir == "." {
		return d, err
	}
	done := "."
	for _, elem := range strings.Split(dir, "/") {
		done = path.Join(done, elem)
		next, err := w.mkdirAt(d, elem, done)
		d.Close()
		if err != nil {
			return nil, err
		}
		d = next
	}
	return d, nil
}

// mkdirAt creates the directory name in parent, unless it exists, and
// opens it, confined; p names it in errors.
func (w Dir) mkdirAt(parent *os.File, name, p string) (*os.File, error) {
	pfd := int(parent.Fd())
	err := syscall.Mkdirat(pfd, name, 0o755)
	switch {
	case err == nil && w.chown:
		err = syscall.Fchownat(pfd, name, w.uid, w.gid, unixAtSymlinkNofollow)
	case errors.Is(err, syscall.EEXIST):
		err = nil // a directory, or what the open below says it is
	}
	if err != nil {
		return nil, &fs.PathError{Op: "mkdirat", Path: p, Err: err}
	}
	fd, err := syscall.Openat(pfd, name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "openat", Path: p, Err: err}
	}
	return w.confine(os.NewFile(uintptr(fd), p), p)
}

// unixAtSymlinkNofollow is AT_SYMLINK_NOFOLLOW, which package syscall
// does not name on every architecture.
const unixAtSymlinkNofollow = 0x100

// Lstat describes p beneath the directory without following a final
// symbolic link.
func (w Dir) Lstat(p string) (fs.FileInfo, error) { return w.root.Lstat(p) }
