package baseline

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/paddock-dev/paddock/benchmarks/internal/langs"
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// needRoot skips a test that needs root, except under `make test`
// (PADDOCK_REQUIRE_GVISOR=1), where it fails.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("PADDOCK_REQUIRE_GVISOR") == "1" {
			t.Fatal("needs root: mount namespaces and chroot")
		}
		t.Skip("needs root: mount namespaces and chroot")
	}
}

func TestReadOnlyRootRefusesWritesAndLeavesNoMount(t *testing.T) {
	needRoot(t)
	fs := t.TempDir()
	mkdir(t, filepath.Join(fs, "proc"))
	mkdir(t, filepath.Join(fs, "workspace"))
	var mnt string
	err := InReadOnlyRoot(fs, func(root string) error {
		mnt = root
		if _, err := os.Stat(filepath.Join(root, "workspace")); err != nil {
			t.Errorf("the root filesystem is not at %s: %v", root, err)
		}
		if _, err := os.Stat(filepath.Join(root, "proc", "self", "stat")); err != nil {
			t.Errorf("no proc filesystem in the view: %v", err)
		}
		err := os.WriteFile(filepath.Join(root, "workspace", "x"), []byte("x"), 0o644)
		if !errors.Is(err, syscall.EROFS) {
			t.Errorf("writing into the view: %v, want EROFS", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(filepath.Join(fs, "workspace")); len(ents) != 0 {
		t.Errorf("the root filesystem changed: %v", ents)
	}
	if _, err := os.Stat(mnt); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("mount point %s left behind: %v", mnt, err)
	}
	mounts, err := os.ReadFile("/proc/thread-self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(mounts), mnt) {
		t.Errorf("%s is mounted in the host's namespace", mnt)
	}
}

// builtRootfs is the template's root filesystem from the cache, or a
// skip (a failure under `make test`) when it is not built.
func builtRootfs(t *testing.T, name string) string {
	t.Helper()
	needRoot(t)
	cache := os.Getenv("PADDOCK_CACHE")
	if cache == "" {
		cache = "/var/cache/paddock"
	}
	fs, err := TemplateRootfs(cache, name)
	if err != nil {
		if os.Getenv("PADDOCK_REQUIRE_GVISOR") == "1" {
			t.Fatalf("%v (make install builds it)", err)
		}
		t.Skip(err)
	}
	return fs
}

func TestNativeRowsRunTheTemplatesOwnPython(t *testing.T) {
	fs := builtRootfs(t, "python")
	py, _ := langs.ByName("python")
	var rows []stats.Row
	var readOnly string
	err := InReadOnlyRoot(fs, func(root string) error {
		start := func(argv []string) *exec.Cmd { return RootfsCommand(root, argv) }
		var err error
		rows, err = nativeRows(t.Context(), py, stats.ModeNative, "rootfs", 2, false, start)
		if err != nil {
			return err
		}
		// Asked, not tried: a failed try would write to the shared cache.
		readOnly, err = Output(t.Context(), start([]string{"/usr/bin/python3", "-c", "import os; print(os.statvfs('/workspace').f_flag & os.ST_RDONLY != 0)"}))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2", len(rows))
	}
	for _, r := range rows {
		// Python 3.11 is the template's (Debian bookworm), whatever the host has.
		if len(r.Counted()) != 2 || !strings.HasPrefix(r.Note, "rootfs python 3.11.") {
			t.Errorf("row %s: %d samples, note %q", r.Probe, len(r.Counted()), r.Note)
		}
	}
	if readOnly != "True\n" {
		t.Errorf("the chrooted interpreter's /workspace read-only: %q, want True", readOnly)
	}
}

// TestHostCommandHasTheSandboxEnvironment: the host row's interpreter
// starts with the sandbox's variables, none of the bench's own.
func TestHostCommandHasTheSandboxEnvironment(t *testing.T) {
	t.Setenv("NODE_EXTRA_CA_CERTS", "/etc/ssl/certs/ca-certificates.crt")
	out, err := hostCommand([]string{"/usr/bin/env"}).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Fields(string(out)), rootfsEnv; !slices.Equal(got, want) {
		t.Errorf("environment %q, want %q", got, want)
	}
}

func TestNativeRowsNoteWhatTheHostLacks(t *testing.T) {
	l := langs.Lang{Name: "python", Native: []string{"/nonexistent/python3", "-c"}, Version: []string{"-V"},
		Probes: []langs.Probe{{Name: "print(1)", Code: "print(1)", OK: langs.Prints("1\n")}}}
	rows, err := nativeRows(t.Context(), l, stats.ModeHost, "host", 3, true, hostCommand)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || len(rows[0].Samples) != 0 || rows[0].Note != "skipped: no /nonexistent/python3 on the host" {
		t.Errorf("rows = %+v", rows)
	}
	if _, err := nativeRows(t.Context(), l, stats.ModeNative, "rootfs", 3, false, hostCommand); err == nil {
		t.Error("a missing baseline interpreter is not an error")
	}
}

func TestNativeRowsSkipAProbeTheHostFails(t *testing.T) {
	sh := langs.Lang{Name: "sh", Native: []string{"/bin/sh", "-c"}, Version: []string{"-c", "echo 1.0"},
		Probes: []langs.Probe{
			{Name: "ok", Code: "echo 1", OK: langs.Prints("1\n")},
			{Name: "missing module", Code: "echo 'No module named pandas' >&2; exit 1", OK: langs.Prints("1\n")},
		}}
	rows, err := nativeRows(t.Context(), sh, stats.ModeHost, "host", 3, true, hostCommand)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || len(rows[0].Counted()) != 3 || rows[0].Note != "host sh 1.0" {
		t.Fatalf("rows = %+v", rows)
	}
	if len(rows[1].Samples) != 0 || rows[1].Note != "host sh 1.0: skipped: native sh missing module: exit status 1: No module named pandas" {
		t.Errorf("failing probe's row = %+v", rows[1])
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}
