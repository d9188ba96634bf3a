package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"testing"

	"github.com/paddock-dev/paddock/runner/wire"
)

func TestLsMode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode fs.FileMode
		want string
	}{
		{mode: 0o644, want: "-rw-r--r--"},
		{mode: fs.ModeDir | 0o755, want: "drwxr-xr-x"},
		{mode: fs.ModeSymlink | 0o777, want: "lrwxrwxrwx"},
		{mode: fs.ModeNamedPipe | 0o600, want: "prw-------"},
		{mode: fs.ModeSocket | 0o755, want: "srwxr-xr-x"},
		{mode: fs.ModeDevice | fs.ModeCharDevice | 0o666, want: "crw-rw-rw-"},
		{mode: fs.ModeDevice | 0o660, want: "brw-rw----"},
		{mode: fs.ModeSetuid | 0o755, want: "-rwsr-xr-x"},
		{mode: fs.ModeSetuid | fs.ModeSetgid | 0o644, want: "-rwSr-Sr--"},
		{mode: fs.ModeDir | fs.ModeSticky | 0o777, want: "drwxrwxrwt"},
		{mode: fs.ModeDir | fs.ModeSticky | 0o776, want: "drwxrwxrwT"},
		{mode: 0, want: "----------"},
	}
	for _, tt := range tests {
		if got := lsMode(tt.mode); got != tt.want {
			t.Errorf("lsMode(%v) = %q, want %q", tt.mode, got, tt.want)
		}
	}
}

func TestFileAck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want wire.Ack
	}{
		{name: "ok", want: wire.Ack{ID: 1}},
		{name: "bad path", err: fmt.Errorf("x: %w", ErrBadPath), want: wire.Ack{ID: 1, Error: "x: bad file path", BadRequest: true, Code: "bad_path"}},
		{name: "missing", err: &fs.PathError{Op: "openat", Path: "a", Err: syscall.ENOENT}, want: wire.Ack{ID: 1, Error: "openat a: no such file or directory", NotFound: true, Code: "not_found"}},
		{name: "escape", err: &fs.PathError{Op: "openat", Path: "l", Err: errors.New("path escapes from parent")}, want: wire.Ack{ID: 1, Error: "openat l: path escapes from parent", BadRequest: true, Code: "bad_path"}},
		{name: "too large", err: fmt.Errorf("f: %w", ErrFileTooLarge), want: wire.Ack{ID: 1, Error: "f: file too large", BadRequest: true, Code: "too_large"}},
		{name: "too many entries", err: fmt.Errorf("d: %w", ErrTooManyEntries), want: wire.Ack{ID: 1, Error: "d: too many directory entries", BadRequest: true, Code: "too_many_entries"}},
		{name: "a pipe", err: fmt.Errorf("p: %w", ErrNotRegular), want: wire.Ack{ID: 1, Error: "p: not a regular file", BadRequest: true, Code: "not_regular"}},
		{name: "a socket", err: &fs.PathError{Op: "openat", Path: "s", Err: syscall.ENXIO}, want: wire.Ack{ID: 1, Error: "openat s: no such device or address", BadRequest: true, Code: "not_regular"}},
		{name: "not a directory", err: &fs.PathError{Op: "openat", Path: "f/x", Err: syscall.ENOTDIR}, want: wire.Ack{ID: 1, Error: "openat f/x: not a directory", BadRequest: true, Code: "not_dir"}},
		{name: "a directory", err: &os.LinkError{Op: "renameat", Old: "t", New: "d", Err: syscall.EISDIR}, want: wire.Ack{ID: 1, Error: "renameat t d: is a directory", BadRequest: true, Code: "is_dir"}},
		{name: "name too long", err: &fs.PathError{Op: "openat", Path: "n", Err: syscall.ENAMETOOLONG}, want: wire.Ack{ID: 1, Error: "openat n: file name too long", BadRequest: true, Code: "name_too_long"}},
		{name: "loop", err: &fs.PathError{Op: "openat", Path: "l", Err: syscall.ELOOP}, want: wire.Ack{ID: 1, Error: "openat l: too many levels of symbolic links", BadRequest: true, Code: "loop"}},
		{name: "exists", err: &fs.PathError{Op: "mkdirat", Path: "d", Err: syscall.EEXIST}, want: wire.Ack{ID: 1, Error: "mkdirat d: file exists", BadRequest: true, Code: "exists"}},
		{name: "not empty", err: &os.LinkError{Op: "renameat", Old: "t", New: "d", Err: syscall.ENOTEMPTY}, want: wire.Ack{ID: 1, Error: "renameat t d: directory not empty", BadRequest: true, Code: "exists"}},
		{name: "permission", err: fmt.Errorf("h: %w", fs.ErrPermission), want: wire.Ack{ID: 1, Error: "h: permission denied", BadRequest: true, Code: "permission"}},
		{name: "access", err: &fs.PathError{Op: "openat", Path: "s", Err: syscall.EACCES}, want: wire.Ack{ID: 1, Error: "openat s: permission denied", BadRequest: true, Code: "permission"}},
		{name: "not permitted", err: &fs.PathError{Op: "fchown", Path: "s", Err: syscall.EPERM}, want: wire.Ack{ID: 1, Error: "fchown s: operation not permitted", BadRequest: true, Code: "permission"}},
		{name: "read-only", err: &fs.PathError{Op: "openat", Path: "r", Err: syscall.EROFS}, want: wire.Ack{ID: 1, Error: "openat r: read-only file system", BadRequest: true, Code: "permission"}},
		{name: "disk full", err: &fs.PathError{Op: "write", Path: "f", Err: syscall.ENOSPC}, want: wire.Ack{ID: 1, Error: "write f: no space left on device", BadRequest: true, Code: "no_space"}},
		{name: "quota", err: &fs.PathError{Op: "write", Path: "f", Err: syscall.EDQUOT}, want: wire.Ack{ID: 1, Error: "write f: disk quota exceeded", BadRequest: true, Code: "no_space"}},
		{name: "file size limit", err: &fs.PathError{Op: "write", Path: "f", Err: syscall.EFBIG}, want: wire.Ack{ID: 1, Error: "write f: file too large", BadRequest: true, Code: "no_space"}},
		{name: "joined with a close error", err: errors.Join(&fs.PathError{Op: "write", Path: "f", Err: syscall.ENOSPC}, os.ErrClosed), want: wire.Ack{ID: 1, Error: "write f: no space left on device\nfile already closed", BadRequest: true, Code: "no_space"}},
		{name: "the agent's own failure", err: &fs.PathError{Op: "read", Path: "f", Err: syscall.EIO}, want: wire.Ack{ID: 1, Error: "read f: input/output error"}},
		{name: "an error without errno", err: errors.New("decoding: boom"), want: wire.Ack{ID: 1, Error: "decoding: boom"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fileAck(1, tt.err)
			if got.ID != tt.want.ID || got.Error != tt.want.Error || got.BadRequest != tt.want.BadRequest || got.NotFound != tt.want.NotFound || got.Code != tt.want.Code {
				t.Errorf("fileAck = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// os.Root's refusal to follow a link out is the error escapes recognises.
func TestEscapesMatchesRoot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Symlink("/etc/passwd", dir+"/out"); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, name := range []string{"out", "../x"} {
		if _, err := root.Open(name); !escapes(err) {
			t.Errorf("Open(%q) = %v, not an escape", name, err)
		}
	}
}
