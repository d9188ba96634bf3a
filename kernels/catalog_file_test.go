package kernels_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/paddock-dev/paddock/kernels"
)

// A file catalog writes each record owner-only, replaces it whole, skips
// files that are not records, refuses ids that are not hex (a path), and
// forgets removed records.
func TestFileCatalog(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	c := kernels.FileCatalog{Dir: dir}
	ctx := t.Context()
	for _, doc := range []string{`{"n":1}`, `{"n":2}`} {
		if err := c.Save(ctx, "0a1b", []byte(doc)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Save(ctx, "beef", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "../x", "zz"} {
		if err := c.Save(ctx, bad, []byte(`{}`)); err == nil {
			t.Errorf("Save(%q) wrote a record", bad)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := c.Remove(ctx, "beef"); err != nil {
		t.Fatal(err)
	}
	if err := c.Remove(ctx, "beef"); err != nil {
		t.Errorf("removing a missing record: %v", err)
	}
	got, err := c.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || string(got["0a1b"]) != `{"n":2}` {
		t.Errorf("Load = %q, want only 0a1b's second record", got)
	}
	for _, p := range []string{dir, filepath.Join(dir, "0a1b.json")} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			t.Errorf("%s has mode %o, want owner-only", p, perm)
		}
	}
}
