package agent

import (
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/paddock-dev/paddock/runner/wire"
)

// checkPath accepts a clean, relative, slash-separated path that names a
// file beneath the working directory.
func checkPath(p string) error {
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

// fileWriter writes request files beneath root, owned by the user. dir is
// root's path, as the kernel names it.
type fileWriter struct {
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
func (w fileWriter) write(files []wire.File) error {
	for _, f := range files {
		if err := checkPath(f.Path); err != nil {
			return &fileFailure{path: f.Path, err: err}
		}
	}
	for _, f := range files {
		if err := w.replace(f.Path, f.Content); err != nil {
			return &fileFailure{path: f.Path, err: err}
		}
	}
	return nil
}

// fileFailure is a request file that could not be written.
type fileFailure struct {
	path string
	err  error
}

func (f *fileFailure) Error() string { return fmt.Sprintf("writing %q: %v", f.path, f.err) }
func (f *fileFailure) Unwrap() error { return f.err }

// openWorkdir creates the working directory, gives it to the user and
// opens it as the root every request file is written beneath.
func openWorkdir(cfg Config) (*os.Root, error) {
	if err := os.MkdirAll(cfg.Workdir, 0o755); err != nil {
		return nil, fmt.Errorf("creating workdir: %w", err)
	}
	if cfg.switchesUser() {
		if err := os.Chown(cfg.Workdir, cfg.UID, cfg.GID); err != nil {
			return nil, fmt.Errorf("chowning workdir: %w", err)
		}
	}
	root, err := os.OpenRoot(cfg.Workdir)
	if err != nil {
		return nil, fmt.Errorf("opening workdir: %w", err)
	}
	return root, nil
}
