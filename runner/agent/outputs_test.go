package agent

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/paddock-dev/paddock/runner/agent/workspace"
	"github.com/paddock-dev/paddock/runner/wire"
)

// sent is one entry the walk sent, with its content.
type sent struct {
	wire.OutputFile
	content string
}

// outputDir is a working directory as a program may leave it: files,
// dot files, a subdirectory, a pipe, links to a file and a directory
// outside it, and a file larger than the caps the tests give.
func outputDir(t *testing.T) string {
	t.Helper()
	outside := t.TempDir()
	dir := t.TempDir()
	write := func(p, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("out/b.png", "bbb")
	write("out/a.png", "aa")
	write("out/.hidden.png", "h")
	write("out/sub/c.png", "c")
	write("out/notes.txt", "n")
	write("big.bin", strings.Repeat("x", 100))
	write("main.py", "print(1)")
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "out/link.png")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "out/pipe.png"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestOutputWalk(t *testing.T) {
	t.Parallel()
	reg := func(pattern, path string, content string) sent {
		return sent{wire.OutputFile{Pattern: pattern, Path: path, Size: int64(len(content)), Mode: "-rw-r--r--"}, content}
	}
	refused := func(pattern, path, mode, code string) sent {
		return sent{OutputFile: wire.OutputFile{Pattern: pattern, Path: path, Mode: mode, Code: code}}
	}
	tests := []struct {
		name     string
		patterns []string
		room     int64
		left     int
		walk     int
		want     []sent
	}{
		{
			name:     "a pattern's matches in order, dot files included; links, pipes and directories refused",
			patterns: []string{"out/*.png"},
			want: []sent{
				reg("out/*.png", "out/.hidden.png", "h"),
				reg("out/*.png", "out/a.png", "aa"),
				reg("out/*.png", "out/b.png", "bbb"),
				refused("out/*.png", "out/link.png", "lrwxrwxrwx", wire.OutputErrSymlink),
				refused("out/*.png", "out/pipe.png", "prw-r--r--", wire.OutputErrNotRegular),
			},
		},
		{
			name:     "a star does not cross a slash; a directory is refused",
			patterns: []string{"out/s*", "out/*/*.png"},
			want: []sent{
				refused("out/s*", "out/sub", "drwxr-xr-x", wire.OutputErrIsDir),
				reg("out/*/*.png", "out/sub/c.png", "c"),
			},
		},
		{
			name:     "a file named twice is sent once; a pattern matching nothing says so",
			patterns: []string{"out/a.png", "out/?.png", "*.csv", "none/*.png"},
			want: []sent{
				reg("out/a.png", "out/a.png", "aa"),
				reg("out/?.png", "out/b.png", "bbb"),
				refused("*.csv", "", "", wire.OutputErrNotFound),
				refused("none/*.png", "", "", wire.OutputErrNotFound),
			},
		},
		{
			name:     "a link on the way is refused when named, passed over when matched",
			patterns: []string{"escape/secret", "escape/*", "*/secret"},
			want: []sent{
				refused("escape/secret", "escape", "lrwxrwxrwx", wire.OutputErrSymlink),
				refused("*/secret", "", "", wire.OutputErrNotFound),
			},
		},
		{
			name:     "files over what is left of the byte budget",
			patterns: []string{"big.bin", "out/b.png", "out/a.png"},
			room:     102,
			want: []sent{
				reg("big.bin", "big.bin", strings.Repeat("x", 100)),
				{OutputFile: wire.OutputFile{Pattern: "out/b.png", Path: "out/b.png", Size: 3, Mode: "-rw-r--r--", Code: wire.OutputErrTooLarge}},
				reg("out/a.png", "out/a.png", "aa"),
			},
		},
		{
			name:     "the entry past the count ends the answer",
			patterns: []string{"out/*.png", "main.py"},
			left:     2,
			want: []sent{
				reg("out/*.png", "out/.hidden.png", "h"),
				reg("out/*.png", "out/a.png", "aa"),
				refused("out/*.png", "out/b.png", "", wire.OutputErrTooManyFiles),
			},
		},
		{
			name:     "a walk over its entries",
			patterns: []string{"*/*.png", "main.py"},
			walk:     8,
			want: []sent{
				refused("*/*.png", "", "", wire.OutputErrTooManyEntries),
				reg("main.py", "main.py", "print(1)"),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := outputDir(t)
			root, err := os.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			w, err := workspace.Open(root, false, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			var got []sent
			o := &outputWalk{w: w, room: 1 << 20, left: 100, walk: maxOutputWalk, seen: map[string]bool{},
				send: func(e wire.OutputFile, content []byte) error {
					got = append(got, sent{e, string(content)})
					return nil
				}}
			if tt.room > 0 {
				o.room = tt.room
			}
			if tt.left > 0 {
				o.left = tt.left
			}
			if tt.walk > 0 {
				o.walk = tt.walk
			}
			for _, p := range tt.patterns {
				if err := o.pattern(p); err != nil {
					t.Fatalf("pattern %q: %v", p, err)
				}
				if o.ended {
					break
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("sent:\n%+v\nwant:\n%+v", got, tt.want)
			}
		})
	}
}

func TestCheckPattern(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"out/*.png", "a/[bc]?/d", `x\*`, "**/x"} {
		if err := checkPattern(p); err != nil {
			t.Errorf("checkPattern(%q) = %v, want nil", p, err)
		}
	}
	for _, p := range []string{"", "/abs/*", "../*", "a/../b", "./a", "a/", "[z", `a\`} {
		if err := checkPattern(p); !errors.Is(err, ErrBadPath) {
			t.Errorf("checkPattern(%q) = %v, want ErrBadPath", p, err)
		}
	}
}

// A real agent answers a Python program's files after it exits, also
// after its timeout, and only then: its exit comes last.
func TestPythonOutputs(t *testing.T) {
	t.Parallel()
	code := `import os, sys
os.makedirs("out", exist_ok=True)
with open("out/plot.png", "wb") as f:
    f.write(bytes(range(256)) * 4)
with open("big.bin", "wb") as f:
    f.write(b"x" * 5000)
os.symlink("/etc/passwd", "out/passwd.png")
if sys.argv[1:] == ["hang"]:
    print("written", flush=True)
    while True:
        pass
`
	tests := []struct {
		name   string
		args   []string
		reason string
	}{
		{name: "after an exit", reason: "ok"},
		{name: "after a timeout", args: []string{"hang"}, reason: "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := startAgent(t, testConfig(t, LanguagePython))
			c.hello()
			req := wire.Run{Code: code, Args: tt.args, Outputs: []string{"out/*.png", "big.bin", "*.csv"}, MaxOutputBytes: 4096}
			if tt.args != nil {
				req.TimeoutMS = 500
			}
			for {
				res := c.run(req)
				exit := res.mustExit(t)
				if tt.reason == "timeout" && len(res.stdout) == 0 && req.TimeoutMS < 60_000 {
					req.TimeoutMS *= 2 // killed before it wrote its files: a slow start
					c = startAgent(t, testConfig(t, LanguagePython))
					c.hello()
					continue
				}
				if exit.Reason != tt.reason {
					t.Errorf("reason %q, want %q; stderr %q", exit.Reason, tt.reason, res.stderr)
				}
				want := []sent{
					{wire.OutputFile{Pattern: "out/*.png", Path: "out/passwd.png", Mode: "lrwxrwxrwx", Code: wire.OutputErrSymlink}, ""},
					{wire.OutputFile{Pattern: "out/*.png", Path: "out/plot.png", Size: 1024, Mode: "-rw-r--r--"}, strings.Repeat(string(bytesUpTo256()), 4)},
					{wire.OutputFile{Pattern: "big.bin", Path: "big.bin", Size: 5000, Mode: "-rw-r--r--", Code: wire.OutputErrTooLarge}, ""},
					{wire.OutputFile{Pattern: "*.csv", Code: wire.OutputErrNotFound}, ""},
				}
				if !reflect.DeepEqual(res.outputs, want) {
					t.Errorf("outputs:\n%+v\nwant:\n%+v", res.outputs, want)
				}
				return
			}
		})
	}
}

// bytesUpTo256 is every byte value once, in order.
func bytesUpTo256() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}
