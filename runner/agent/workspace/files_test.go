package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/paddock-dev/paddock/runner/wire"
)

func TestCheckPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		path string
		ok   bool
	}{
		{name: "file", path: "main.py", ok: true},
		{name: "nested", path: "data/in/x.csv", ok: true},
		{name: "dot file", path: ".env", ok: true},
		{name: "dots in name", path: "a..b/..c", ok: true},
		{name: "empty", path: ""},
		{name: "dot", path: "."},
		{name: "parent", path: "../x"},
		{name: "parent only", path: ".."},
		{name: "parent inside", path: "a/../../x"},
		{name: "parent that stays inside", path: "a/../x"},
		{name: "absolute", path: "/etc/x"},
		{name: "leading dot slash", path: "./a"},
		{name: "double slash", path: "a//b"},
		{name: "trailing slash", path: "a/"},
		{name: "NUL", path: "a\x00b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckPath(tt.path)
			if tt.ok && err != nil {
				t.Errorf("CheckPath(%q) = %v, want nil", tt.path, err)
			}
			if !tt.ok && !errors.Is(err, ErrBadPath) {
				t.Errorf("CheckPath(%q) = %v, want ErrBadPath", tt.path, err)
			}
		})
	}
}

func TestFileWriter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		files   []wire.File
		want    map[string]string // path beneath the workdir → content
		wantErr bool
	}{
		{
			name:  "nested files",
			files: []wire.File{{Path: "a/b/c.txt", Content: []byte("c")}, {Path: "a/d.txt", Content: []byte("d")}},
			want:  map[string]string{"a/b/c.txt": "c", "a/d.txt": "d"},
		},
		{
			name:  "later file replaces earlier",
			files: []wire.File{{Path: "x", Content: []byte("long content")}, {Path: "x", Content: []byte("short")}},
			want:  map[string]string{"x": "short"},
		},
		{
			name:    "through a symlink out of the workdir",
			files:   []wire.File{{Path: "out/x", Content: []byte("pwn")}},
			wantErr: true,
		},
		{
			name:  "onto a symlink out of the workdir replaces the link",
			files: []wire.File{{Path: "link", Content: []byte("mine")}},
			want:  map[string]string{"link": "mine"},
		},
		{
			name:    "bad path writes nothing",
			files:   []wire.File{{Path: "first", Content: []byte("1")}, {Path: "../x"}},
			want:    map[string]string{},
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			outside := t.TempDir()
			dir := t.TempDir()
			if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(outside, "target"), filepath.Join(dir, "link")); err != nil {
				t.Fatal(err)
			}
			root, err := os.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			w, err := Open(root, false, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			err = w.Write(tt.files)
			if (err != nil) != tt.wantErr {
				t.Fatalf("write = %v, want error %v", err, tt.wantErr)
			}
			for p, want := range tt.want {
				got, err := os.ReadFile(filepath.Join(dir, p))
				if err != nil || string(got) != want {
					t.Errorf("%s = %q, %v; want %q", p, got, err, want)
				}
				fi, err := os.Stat(filepath.Join(dir, p))
				if err == nil && fi.Mode().Perm() != 0o644 {
					t.Errorf("%s mode %v, want 0644", p, fi.Mode().Perm())
				}
			}
			entries, err := os.ReadDir(outside)
			if err != nil || len(entries) != 0 {
				t.Errorf("outside the workdir: %v, %v; want nothing written", entries, err)
			}
			if tt.want != nil && len(tt.want) == 0 {
				if _, err := os.Stat(filepath.Join(dir, "first")); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("first: %v, want absent", err)
				}
			}
		})
	}
}
