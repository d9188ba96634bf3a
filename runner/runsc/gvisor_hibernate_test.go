package runsc_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/runner"
)

// openKernel starts a sandbox of lang and opens a kernel on it.
func openKernel(t *testing.T, e *realEnv, lang string) (runner.Sandbox, runner.Kernel) {
	t.Helper()
	sb, err := e.rt.Start(t.Context(), e.specs[lang])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Destroy(t.Context()) })
	k, err := sb.(runner.KernelOpener).OpenKernel(t.Context(), runner.KernelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return sb, k
}

// wake restores a sandbox from dir and takes over its kernel.
func wake(t *testing.T, e *realEnv, lang, dir string) (runner.Sandbox, runner.Kernel, int) {
	t.Helper()
	sb, err := e.rt.Wake(t.Context(), dir, e.specs[lang])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Destroy(t.Context()) })
	k, count, err := sb.(runner.KernelAttacher).AttachKernel(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return sb, k, count
}

// TestGVisorHibernate: a kernel's variables, its execution count and the
// files it wrote survive Hibernate and Wake; the hibernated sandbox is
// gone meanwhile; the image is the owner's only; and a sandbox that never
// opened a kernel cannot be attached to.
func TestGVisorHibernate(t *testing.T) {
	e := newRealEnv(t)
	for _, lang := range []string{"python", "node"} {
		t.Run(lang, func(t *testing.T) {
			sb, k := openKernel(t, e, lang)
			set, check := "x = 41\nopen('kept.txt', 'w').write('kept')", "print(x + 1, open('kept.txt').read())"
			if lang == "node" {
				set, check = "var x = 41; require('fs').writeFileSync('kept.txt', 'kept')", "console.log(x + 1, require('fs').readFileSync('kept.txt', 'utf8'))"
			}
			execCell(t, k, runner.ExecuteRequest{Code: set})
			dir := filepath.Join(t.TempDir(), "image")
			if err := e.rt.Hibernate(t.Context(), sb, dir); err != nil {
				t.Fatal(err)
			}
			if slices.Contains(e.list(t), sb.ID()) {
				if err := sb.Destroy(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			if ids := e.list(t); slices.Contains(ids, sb.ID()) {
				t.Fatalf("hibernated sandbox %s still listed: %v", sb.ID(), ids)
			}
			checkPrivate(t, dir)

			woke, k2, count := wake(t, e, lang, dir)
			if count != 1 {
				t.Errorf("woken kernel's execution count %d, want 1", count)
			}
			if woke.ID() == sb.ID() {
				t.Errorf("woken sandbox kept the old id %s", sb.ID())
			}
			res, ev := execCell(t, k2, runner.ExecuteRequest{Code: check})
			if got := strings.TrimSpace(ev.stdout()); got != "42 kept" || res.ExecutionCount != 2 {
				t.Errorf("after waking: %q, count %d; want \"42 kept\", count 2", got, res.ExecutionCount)
			}
		})
	}

	t.Run("no kernel", func(t *testing.T) {
		sb, err := e.rt.Start(t.Context(), e.specs["python"])
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "image")
		if err := e.rt.Hibernate(t.Context(), sb, dir); err != nil {
			t.Fatal(err)
		}
		_ = sb.Destroy(t.Context())
		woke, err := e.rt.Wake(t.Context(), dir, e.specs["python"])
		if err != nil {
			t.Fatal(err)
		}
		defer woke.Destroy(t.Context())
		if _, _, err := woke.(runner.KernelAttacher).AttachKernel(t.Context()); !errors.Is(err, runner.ErrNotFound) {
			t.Errorf("attaching where no kernel was open: %v, want ErrNotFound", err)
		}
	})

	t.Run("missing image", func(t *testing.T) {
		if _, err := e.rt.Wake(t.Context(), t.TempDir(), e.specs["python"]); !errors.Is(err, runner.ErrSnapshotMissing) {
			t.Errorf("waking from an empty directory: %v, want ErrSnapshotMissing", err)
		}
	})
}

// TestGVisorKeepAndFork: Keep saves a running kernel's image and leaves it
// running; two sandboxes woken from the image both have the state, and
// after Reseed their random numbers differ. Node's kernel refuses Reseed.
func TestGVisorKeepAndFork(t *testing.T) {
	e := newRealEnv(t)
	sb, k := openKernel(t, e, "python")
	execCell(t, k, runner.ExecuteRequest{Code: "import random\nx = 41"})
	dir := filepath.Join(t.TempDir(), "image")
	if err := e.rt.Keep(t.Context(), sb, dir); err != nil {
		t.Fatal(err)
	}
	_, ev := execCell(t, k, runner.ExecuteRequest{Code: "x = 7\nprint(x)"})
	if got := strings.TrimSpace(ev.stdout()); got != "7" {
		t.Fatalf("the kept sandbox after Keep printed %q, want 7", got)
	}
	var draws []string
	for range 2 {
		_, child, _ := wake(t, e, "python", dir)
		if err := child.(runner.Reseeder).Reseed(t.Context()); err != nil {
			t.Fatal(err)
		}
		_, ev := execCell(t, child, runner.ExecuteRequest{Code: "print(x + 1, random.random())"})
		out := strings.Fields(ev.stdout())
		if len(out) != 2 || out[0] != "42" {
			t.Fatalf("child printed %q, want 42 and a number", ev.stdout())
		}
		draws = append(draws, out[1])
	}
	if draws[0] == draws[1] {
		t.Errorf("two reseeded children drew the same random number %s", draws[0])
	}

	_, nk := openKernel(t, e, "node")
	if err := nk.(runner.Reseeder).Reseed(t.Context()); !errors.Is(err, runner.ErrCannotReseed) {
		t.Errorf("node Reseed: %v, want ErrCannotReseed", err)
	}
}

// checkPrivate fails unless every file under dir is its owner's only.
func checkPrivate(t *testing.T, dir string) {
	t.Helper()
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v, want no access for group or others", p, fi.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
