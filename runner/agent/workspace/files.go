package workspace

import (
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/paddock-dev/paddock/runner/wire"
)

// CheckPath accepts a clean, relative, slash-separated path that names a
// file beneath the working directory.
func CheckPath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("empty path: %w", ErrBadPath)
	case strings.ContainsRune(p, 0):
		return fmt.Errorf("path %q contains NUL: %w", p, ErrBadPath)
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("path %q is absolute: %w", p, ErrBadPath)
	}
	for _, elem := range strings.Split(p, "/") {
		if elem == ".." {
			return fmt.Errorf("path %q leaves the working directory: %w", p, ErrBadPath)
		}
	}
	if path.Clean(p) != p || p == "." {
		return fmt.Errorf("path %q is not clean: %w", p, ErrBadPath)
	}
	return nil
}

// Dir writes request files beneath root, owned by the user. dir is
// root's path, as the kernel names it.
type Dir struct {
	root  *os.Root
	dir   string
	chown bool
	uid   int
	gid   int
}

// write checks every path, then writes the files in order (see replace).
// Missing parent directories are created; an existing file is replaced;
// any path that resolves outside the working directory, symlinks
// included, is refused.
func (w Dir) Write(files []wire.File) error {
	for _, f := range files {
		if err := CheckPath(f.Path); err != nil {
			return &FileFailure{Path: f.Path, Err: err}
		}
	}
	for _, f := range files {
		if err := w.Replace(f.Path, f.Content); err != nil {
			return &FileFailure{Path: f.Path, Err: err}
		}
	}
	return nil
}

// FileFailure is a request file that could not be written.
type FileFailure struct {
	Path string
	Err  error
}

func (f *FileFailure) Error() string { return fmt.Sprintf("writing %q: %v", f.Path, f.Err) }
func (f *FileFailure) Unwrap() error { return f.Err }
