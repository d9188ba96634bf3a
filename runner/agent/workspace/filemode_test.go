package workspace

import (
	"io/fs"
	"os"
	"testing"
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
		if got := LsMode(tt.mode); got != tt.want {
			t.Errorf("LsMode(%v) = %q, want %q", tt.mode, got, tt.want)
		}
	}
}

// os.Root's refusal to follow a link out is the error Escapes recognises.
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
		if _, err := root.Open(name); !Escapes(err) {
			t.Errorf("Open(%q) = %v, not an escape", name, err)
		}
	}
}
