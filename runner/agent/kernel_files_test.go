package agent

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/internal/prereq"
	"github.com/paddock-dev/paddock/runner/wire"
)

func (k *kernelClient) writeFile(p string, content []byte) wire.Ack {
	k.t.Helper()
	id := k.nextID()
	return k.call(wire.TypeFileWrite, id, wire.FileWrite{ID: id, Path: p, Content: content})
}

func (k *kernelClient) readFile(p string, max int64) wire.Ack {
	k.t.Helper()
	id := k.nextID()
	return k.call(wire.TypeFileRead, id, wire.FileRead{ID: id, Path: p, Max: max})
}

func (k *kernelClient) listFiles(p string) wire.Ack {
	k.t.Helper()
	id := k.nextID()
	return k.call(wire.TypeFileList, id, wire.FileRead{ID: id, Path: p})
}

// ackShape is what a file test checks of an Ack.
type ackShape struct {
	ok, badRequest, notFound bool
	code                     string
	content                  string
}

func shapeOf(a wire.Ack) ackShape {
	return ackShape{ok: a.Error == "", badRequest: a.BadRequest, notFound: a.NotFound, code: a.Code, content: string(a.Content)}
}

func TestKernelFiles(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, LanguagePython)
	outside := t.TempDir()
	k := startKernel(t, cfg, nil)
	// User code plants links out of the working directory, and a pipe.
	plant := "import os\n" +
		"os.symlink('/etc/passwd', 'out.txt')\n" +
		"os.symlink(" + pyString(outside) + ", 'outdir')\n" +
		"os.symlink('../../../../../../../../etc/hostname', 'o3')\n" +
		"os.symlink('/proc/1/root/etc/hostname', 'o2')\n" +
		"os.mkfifo('pipe')\n" +
		"os.mkdir('sub')\n" +
		"open('sub/in.txt', 'w').write('inside')\n" +
		"os.symlink('sub/in.txt', 'link-in')\n" +
		"os.symlink('loop', 'loop')\n" +
		"os.symlink('missing', 'dangling')"
	k.execute(wire.Execute{Code: plant}).mustDone(t, "ok", "ok")
	long := strings.Repeat("n", 256) // one more than a name may have
	passwd, err := os.ReadFile("/etc/passwd")
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		do   func() wire.Ack
		want ackShape
	}{
		{name: "write nested", do: func() wire.Ack { return k.writeFile("a/b/c.txt", []byte("hello")) }, want: ackShape{ok: true}},
		{name: "read it back", do: func() wire.Ack { return k.readFile("a/b/c.txt", 0) }, want: ackShape{ok: true, content: "hello"}},
		{name: "read within max", do: func() wire.Ack { return k.readFile("a/b/c.txt", 5) }, want: ackShape{ok: true, content: "hello"}},
		{name: "read over max", do: func() wire.Ack { return k.readFile("a/b/c.txt", 4) }, want: ackShape{badRequest: true, code: "too_large"}},
		{name: "read an empty file", do: func() wire.Ack { k.writeFile("empty", nil); return k.readFile("empty", 0) }, want: ackShape{ok: true}},
		{name: "read missing", do: func() wire.Ack { return k.readFile("nope.txt", 0) }, want: ackShape{notFound: true, code: "not_found"}},
		{name: "read a directory", do: func() wire.Ack { return k.readFile("a", 0) }, want: ackShape{badRequest: true, code: "is_dir"}},
		{name: "read a pipe", do: func() wire.Ack { return k.readFile("pipe", 0) }, want: ackShape{badRequest: true, code: "not_regular"}},
		{name: "read a link inside", do: func() wire.Ack { return k.readFile("link-in", 0) }, want: ackShape{ok: true, content: "inside"}},
		{name: "read through a link to /etc/passwd", do: func() wire.Ack { return k.readFile("out.txt", 0) }, want: ackShape{badRequest: true, code: "bad_path"}},
		{name: "read through a relative link out", do: func() wire.Ack { return k.readFile("o3", 0) }, want: ackShape{badRequest: true, code: "bad_path"}},
		{name: "read through /proc", do: func() wire.Ack { return k.readFile("o2", 0) }, want: ackShape{badRequest: true, code: "bad_path"}},
		{name: "read parent", do: func() wire.Ack { return k.readFile("../x", 0) }, want: ackShape{badRequest: true, code: "bad_path"}},
		{name: "read absolute", do: func() wire.Ack { return k.readFile("/etc/passwd", 0) }, want: ackShape{badRequest: true, code: "bad_path"}},
		{name: "write parent", do: func() wire.Ack { return k.writeFile("../x", []byte("x")) }, want: ackShape{badRequest: true, code: "bad_path"}},
		{name: "write absolute", do: func() wire.Ack { return k.writeFile("/tmp/x", []byte("x")) }, want: ackShape{badRequest: true, code: "bad_path"}},
		{name: "write through a directory link out", do: func() wire.Ack { return k.writeFile("outdir/x", []byte("x")) }, want: ackShape{badRequest: true, code: "bad_path"}},
		{name: "write onto a directory", do: func() wire.Ack { return k.writeFile("a", []byte("x")) }, want: ackShape{badRequest: true, code: "is_dir"}},
		{name: "write under a file", do: func() wire.Ack { return k.writeFile("a/b/c.txt/d", []byte("x")) }, want: ackShape{badRequest: true, code: "not_dir"}},
		{name: "list a file", do: func() wire.Ack { return k.listFiles("a/b/c.txt") }, want: ackShape{badRequest: true, code: "not_dir"}},
		{name: "list missing", do: func() wire.Ack { return k.listFiles("nope") }, want: ackShape{notFound: true, code: "not_found"}},
		{name: "list through a link out", do: func() wire.Ack { return k.listFiles("outdir") }, want: ackShape{badRequest: true, code: "bad_path"}},
		{name: "list parent", do: func() wire.Ack { return k.listFiles("..") }, want: ackShape{badRequest: true, code: "bad_path"}},
		{name: "write a name too long", do: func() wire.Ack { return k.writeFile(long, []byte("x")) }, want: ackShape{badRequest: true, code: "name_too_long"}},
		{name: "write under a name too long", do: func() wire.Ack { return k.writeFile(long+"/x", []byte("x")) }, want: ackShape{badRequest: true, code: "name_too_long"}},
		{name: "read a name too long", do: func() wire.Ack { return k.readFile(long, 0) }, want: ackShape{badRequest: true, code: "name_too_long"}},
		{name: "list a name too long", do: func() wire.Ack { return k.listFiles(long) }, want: ackShape{badRequest: true, code: "name_too_long"}},
		{name: "read a link loop", do: func() wire.Ack { return k.readFile("loop", 0) }, want: ackShape{badRequest: true, code: "loop"}},
		{name: "write under a link loop", do: func() wire.Ack { return k.writeFile("loop/x", []byte("x")) }, want: ackShape{badRequest: true, code: "loop"}},
		{name: "write under a dangling link", do: func() wire.Ack { return k.writeFile("dangling/x", []byte("x")) }, want: ackShape{notFound: true, code: "not_found"}},
	}
	for _, tt := range tests {
		if got := shapeOf(tt.do()); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}

	// Writing a planted link replaces the link, not its target.
	if a := k.writeFile("out.txt", []byte("mine")); a.Error != "" {
		t.Errorf("write over the link: %+v", a)
	}
	if fi, err := os.Lstat(filepath.Join(cfg.Workdir, "out.txt")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("out.txt: %v, %v; want a regular file", fi, err)
	}
	if after, _ := os.ReadFile("/etc/passwd"); !bytes.Equal(after, passwd) {
		t.Errorf("/etc/passwd changed")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("written outside the working directory: %v", entries)
	}

	a := k.listFiles("a/b")
	want := []wire.FileEntry{{Name: "c.txt", Size: 5, Mode: "-rw-r--r--"}}
	if a.Error != "" || len(a.Entries) != 1 {
		t.Fatalf("list a/b: %+v", a)
	}
	if mtime := a.Entries[0].MTime; time.Since(mtime) > time.Minute || mtime.Location() != time.UTC {
		t.Errorf("mtime %v", mtime)
	}
	a.Entries[0].MTime = time.Time{}
	if !reflect.DeepEqual(a.Entries, want) {
		t.Errorf("list a/b: %+v, want %+v", a.Entries, want)
	}
	var names []string
	for _, e := range k.listFiles("").Entries {
		names = append(names, e.Name+" "+e.Mode[:1])
	}
	wantNames := []string{"a d", "dangling l", "empty -", "link-in l", "loop l", "o2 l", "o3 l", "out.txt -", "outdir l", "pipe p", "sub d"}
	if !reflect.DeepEqual(names, wantNames) {
		t.Errorf("list: %q, want %q", names, wantNames)
	}
	// The working directory holds no leftover of the writes.
	if got := k.listFiles("."); len(got.Entries) != len(wantNames) {
		t.Errorf("list .: %+v", got.Entries)
	}
}

func TestKernelFilesWhileCellRuns(t *testing.T) {
	t.Parallel()
	k := startKernel(t, testConfig(t, LanguageNode), nil)
	// The cell awaits the file the test writes while it runs.
	req := wire.Execute{Code: "console.log('started'); while (!require('fs').existsSync('in.txt')) await new Promise(r => setTimeout(r, 10)); require('fs').readFileSync('in.txt', 'utf8')"}
	start := k.startCell(&req)
	if f := k.frame(); f.Type != wire.TypeEvent {
		t.Fatalf("frame %c %s, want the cell's output", f.Type, f.Payload)
	}
	// Both file calls are answered while the cell still waits: the file
	// it waits for is written last, so its result cannot come between a
	// call and its answer.
	if a := k.writeFile("other.txt", []byte("during")); a.Error != "" {
		t.Fatalf("write: %+v", a)
	}
	if a := k.readFile("other.txt", 0); string(a.Content) != "during" {
		t.Errorf("read: %+v", a)
	}
	if a := k.writeFile("in.txt", []byte("during")); a.Error != "" {
		t.Fatalf("write: %+v", a)
	}
	res := k.collect(req.ID, start)
	if res.resultText() != "'during'" {
		t.Errorf("cell %+v", res)
	}
}

func TestKernelFilesAsUser(t *testing.T) {
	t.Parallel()
	prereq.Root(t, "(to switch users)")
	cfg := testConfig(t, LanguageNode)
	cfg.UID, cfg.GID = 1000, 1000
	cfg.Workdir = userWorkdir(t)
	k := startKernel(t, cfg, nil)
	// A root-only file, hard-linked into the working directory.
	secret := filepath.Join(filepath.Dir(cfg.Workdir), "secret")
	if err := os.WriteFile(secret, []byte("root only"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(secret, filepath.Join(cfg.Workdir, "hard")); err != nil {
		t.Fatal(err)
	}
	if got, want := shapeOf(k.readFile("hard", 0)), (ackShape{badRequest: true, code: "permission"}); got != want {
		t.Errorf("read of a root-only hard link: %+v, want %+v", got, want)
	}
	// Writing it replaces the link: the root-owned file is untouched.
	if a := k.writeFile("hard", []byte("mine")); a.Error != "" {
		t.Errorf("write: %+v", a)
	}
	if b, _ := os.ReadFile(secret); string(b) != "root only" {
		t.Errorf("secret = %q", b)
	}
	if a := k.writeFile("d/new.txt", []byte("x")); a.Error != "" {
		t.Fatalf("write: %+v", a)
	}
	for _, p := range []string{"hard", "d", "d/new.txt"} {
		fi, err := os.Stat(filepath.Join(cfg.Workdir, p))
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != 1000 || st.Gid != 1000 {
			t.Errorf("%s owned by %d:%d, want 1000:1000", p, st.Uid, st.Gid)
		}
	}
	res := k.execute(wire.Execute{Code: "const fs = require('fs'); fs.readFileSync('d/new.txt', 'utf8') + fs.readFileSync('hard', 'utf8')"})
	if res.resultText() != "'xmine'" {
		t.Errorf("the user reads %+v", res.events)
	}
}

// pyString quotes s as a Python string literal.
func pyString(s string) string {
	return strconv.Quote(s)
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
