package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A descriptor is accepted only where the kernel says it lies beneath the
// working directory, whatever path led to it.
func TestConfine(t *testing.T) {
	t.Parallel()
	dir, outside := t.TempDir(), t.TempDir()
	for _, p := range []string{filepath.Join(dir, "in"), filepath.Join(outside, "secret")} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir+"-sibling", 0o755); err != nil { // shares dir's name as a prefix
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir + "-sibling") })
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	w, err := Open(root, false, 0, 0)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		open    string // opened directly, as a followed link would be
		wantBad bool
	}{
		{name: "the working directory", open: dir},
		{name: "a file inside", open: filepath.Join(dir, "in")},
		{name: "a file outside", open: filepath.Join(outside, "secret"), wantBad: true},
		{name: "through a link out", open: filepath.Join(dir, "out", "secret"), wantBad: true},
		{name: "a sibling sharing the prefix", open: dir + "-sibling", wantBad: true},
		{name: "the parent", open: filepath.Dir(dir), wantBad: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := os.Open(tt.open)
			if err != nil {
				t.Fatal(err)
			}
			got, err := w.confine(f, "p")
			if bad := errors.Is(err, ErrBadPath); bad != tt.wantBad || !tt.wantBad && err != nil {
				t.Fatalf("confine = %v, want bad path %v", err, tt.wantBad)
			}
			if got != nil {
				got.Close()
			} else if err := f.Close(); !errors.Is(err, os.ErrClosed) {
				t.Errorf("a refused descriptor is left open (Close = %v)", err)
			}
		})
	}

	// Creating parents follows a link as the kernel does, then refuses
	// where it led: nothing is made outside.
	if err := w.Replace("out/new/x", []byte("x")); !errors.Is(err, ErrBadPath) {
		t.Errorf("replace through a link out = %v, want a bad path", err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("outside holds %v, want only secret", entries)
	}
}
