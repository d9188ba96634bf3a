package workspace

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"

	"github.com/paddock-dev/paddock/runner/wire"
)

// The working directory's files for the kernel's requests. User code runs
// next to them and may have planted symbolic links, hard links or pipes:
// every path resolves through the os.Root (never outside the working
// directory), a write replaces the file instead of writing through it, and
// a read opens only regular files the user may read.

// MaxFileContent bounds a read: the content, in base64, fits in one Ack.
const MaxFileContent = wire.MaxPayload/4*3 - 64<<10

// MaxListEntries bounds a directory listing.
const MaxListEntries = 10_000

// replace writes content to p, creating missing parent directories: the
// content goes to a new file, owned by the user, that is then renamed over
// p. The directory is open, confined, throughout: the new file and the
// rename are relative to it.
func (w Dir) Replace(p string, content []byte) error {
	if err := CheckPath(p); err != nil {
		return err
	}
	d, err := w.MkdirAll(path.Dir(p))
	if err != nil {
		return err
	}
	defer d.Close()
	dfd := int(d.Fd())
	base := path.Base(p)
	tmp := ".paddock-" + rand.Text() + ".tmp"
	fd, err := syscall.Openat(dfd, tmp, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		return &fs.PathError{Op: "openat", Path: path.Join(path.Dir(p), tmp), Err: err}
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, err = f.Write(content)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil && w.chown {
		err = f.Chown(w.uid, w.gid)
	}
	err = errors.Join(err, f.Close())
	if err == nil {
		if err = syscall.Renameat(dfd, tmp, dfd, base); err != nil {
			err = &os.LinkError{Op: "renameat", Old: tmp, New: p, Err: err}
		}
	}
	if errors.Is(err, syscall.EEXIST) || errors.Is(err, syscall.ENOTEMPTY) {
		err = fmt.Errorf("%s: %w", p, syscall.EISDIR) // a file cannot replace a directory
	}
	if err != nil {
		syscall.Unlinkat(dfd, tmp)
		return err
	}
	return nil
}

// read returns the content of the regular file p, at most max bytes (zero:
// MaxFileContent); a larger file is refused.
func (w Dir) Read(p string, max int64) ([]byte, error) {
	if err := CheckPath(p); err != nil {
		return nil, err
	}
	limit := int64(MaxFileContent)
	if max > 0 && max < limit {
		limit = max
	}
	// Non-blocking: opening a pipe must not wait for a writer.
	f, err := w.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	switch {
	case fi.IsDir():
		return nil, fmt.Errorf("%s: %w", p, syscall.EISDIR)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s: %w", p, ErrNotRegular)
	}
	if err := w.MayRead(fi); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s has %d bytes, more than %d: %w", p, fi.Size(), limit, ErrFileTooLarge)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s has more than %d bytes: %w", p, limit, ErrFileTooLarge)
	}
	return b, nil
}

// mayRead checks that the user could read the file: the agent may run as
// root, and a hard link can bring another user's file into the working
// directory.
func (w Dir) MayRead(fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !w.chown || !ok {
		return nil
	}
	perm := fi.Mode().Perm()
	var bit fs.FileMode
	switch {
	case int(st.Uid) == w.uid:
		bit = 0o400
	case int(st.Gid) == w.gid:
		bit = 0o040
	default:
		bit = 0o004
	}
	if perm&bit == 0 {
		return fs.ErrPermission
	}
	return nil
}

// list describes the entries of directory p ("" or "." is the working
// directory), sorted by name. Symbolic links are described, not followed.
func (w Dir) List(p string) ([]wire.FileEntry, error) {
	name := p
	if p == "" || p == "." {
		name = "."
	} else if err := CheckPath(p); err != nil {
		return nil, err
	}
	d, err := w.OpenFile(name, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	fi, err := d.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s: %w", name, syscall.ENOTDIR)
	}
	dirents, err := d.ReadDir(MaxListEntries + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if len(dirents) > MaxListEntries {
		return nil, fmt.Errorf("%s has more than %d entries: %w", name, MaxListEntries, ErrTooManyEntries)
	}
	entries := make([]wire.FileEntry, 0, len(dirents))
	for _, de := range dirents {
		info, err := de.Info()
		if err != nil {
			continue // removed meanwhile
		}
		entries = append(entries, wire.FileEntry{
			Name:  de.Name(),
			Size:  info.Size(),
			IsDir: info.IsDir(),
			Mode:  LsMode(info.Mode()),
			MTime: info.ModTime().UTC(),
		})
	}
	slices.SortFunc(entries, func(a, b wire.FileEntry) int { return strings.Compare(a.Name, b.Name) })
	return entries, nil
}

// workDir is where the directory p ("" or "." is the working directory) lies
// beneath the working directory, as the kernel names it.
func (w Dir) WorkDir(p string) (string, error) {
	name := "."
	if p != "" && p != "." {
		if err := CheckPath(p); err != nil {
			return "", err
		}
		name = p
	}
	d, err := w.OpenFile(name, os.O_RDONLY|syscall.O_DIRECTORY)
	if err != nil {
		return "", err
	}
	defer d.Close()
	return FDPath(d)
}
