// Package deploy holds the systemd unit; its test checks that the unit
// works as shipped: every path it names is created by `make
// install-system`, and systemd accepts the installed unit.
package deploy

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// shared holds the binaries both tests install (built once, by the first
// make) and a stand-in runsc: the target copies it, nothing runs it.
var shared string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "paddock-deploy-")
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "runsc"), []byte("#!/bin/sh\n"), 0o755)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "preparing the install test:", err)
		os.Exit(1)
	}
	shared = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// installSystem runs `make install-system` into dest with vars.
func installSystem(t *testing.T, dest string, vars ...string) {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatal("make not found: apt-get install -y make")
	}
	args := append([]string{"-C", "..", "--no-print-directory", "install-system",
		"DESTDIR=" + dest, "BIN=" + filepath.Join(shared, "bin"), "RUNSC=" + filepath.Join(shared, "runsc")}, vars...)
	cmd := exec.CommandContext(t.Context(), "make", args...)
	// A parent make (make test) must not hand its job server or flags on.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MAKEFLAGS=") && !strings.HasPrefix(kv, "MFLAGS=") && !strings.HasPrefix(kv, "MAKELEVEL=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// unitPaths returns every absolute path the unit names outside comments:
// environment values, the command and its --flag=/path arguments.
func unitPaths(t *testing.T, unit []byte) []string {
	t.Helper()
	var paths []string
	sc := bufio.NewScanner(bytes.NewReader(unit))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' || line[0] == '[' {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("unit line %q: want Key=value", line)
		}
		switch key {
		case "Environment":
			_, v, _ := strings.Cut(value, "=")
			if strings.HasPrefix(v, "/") {
				paths = append(paths, v)
			}
		case "ExecStart":
			for _, word := range strings.Fields(value) {
				if i := strings.Index(word, "=/"); strings.HasPrefix(word, "--") && i >= 0 {
					word = word[i+1:]
				}
				if strings.HasPrefix(word, "/") {
					paths = append(paths, word)
				}
			}
		}
	}
	return paths
}

// verifyUnit runs systemd-analyze verify on the installed unit with its
// paths moved under dest, so that systemd checks its syntax and that its
// command exists and is executable.
func verifyUnit(t *testing.T, dest, prefix string, unit []byte) {
	t.Helper()
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Fatal("systemd-analyze not found: apt-get install -y systemd")
	}
	moved := strings.ReplaceAll(string(unit), prefix+"/", filepath.Join(dest, prefix)+"/")
	file := filepath.Join(t.TempDir(), "paddock.service")
	if err := os.WriteFile(file, []byte(moved), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), "systemd-analyze", "verify", "--man=no", file).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

func TestInstallSystemCreatesEveryPathOfTheUnit(t *testing.T) {
	shipped, err := os.ReadFile("paddock.service")
	if err != nil {
		t.Fatal(err)
	}
	dest := t.TempDir()
	installSystem(t, dest, "PREFIX=/usr/local", "PADDOCK_CACHE=/var/cache/paddock", "PADDOCK_STATE=/var/lib/paddock", "PADDOCK_MIRROR=")
	installed, err := os.ReadFile(filepath.Join(dest, "etc/systemd/system/paddock.service"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(installed, shipped) {
		t.Errorf("with the default settings the installed unit differs from deploy/paddock.service:\n%s", installed)
	}
	paths := unitPaths(t, installed)
	want := []string{
		"/var/cache/paddock",
		"/var/lib/paddock",
		"/usr/local/lib/paddock/runsc",
		"/usr/local/bin/paddock-agent",
		"/usr/local/bin/paddock",
	}
	if !slices.Equal(paths, want) {
		t.Errorf("unit names %q, want %q", paths, want)
	}
	for _, p := range paths {
		fi, err := os.Stat(filepath.Join(dest, p))
		if err != nil {
			t.Errorf("%s named by the unit: %v", p, err)
			continue
		}
		if !fi.IsDir() && fi.Mode()&0o111 == 0 {
			t.Errorf("%s named by the unit is not executable: %v", p, fi.Mode())
		}
	}
	verifyUnit(t, dest, "/usr/local", installed)
}

func TestInstallSystemElsewhereRewritesTheUnit(t *testing.T) {
	dest := t.TempDir()
	installSystem(t, dest, "PREFIX=/opt/paddock", "PADDOCK_CACHE=/srv/paddock/cache", "PADDOCK_STATE=/srv/paddock/state",
		"PADDOCK_MIRROR=http://mirror.local/debian")
	installed, err := os.ReadFile(filepath.Join(dest, "etc/systemd/system/paddock.service"))
	if err != nil {
		t.Fatal(err)
	}
	paths := unitPaths(t, installed)
	want := []string{
		"/srv/paddock/cache",
		"/srv/paddock/state",
		"/opt/paddock/lib/paddock/runsc",
		"/opt/paddock/bin/paddock-agent",
		"/opt/paddock/bin/paddock",
	}
	if !slices.Equal(paths, want) {
		t.Errorf("unit names %q, want %q", paths, want)
	}
	for _, p := range paths {
		if _, err := os.Stat(filepath.Join(dest, p)); err != nil {
			t.Errorf("%s named by the unit: %v", p, err)
		}
	}
	if !bytes.Contains(installed, []byte("\nEnvironment=PADDOCK_MIRROR=http://mirror.local/debian\n")) {
		t.Errorf("installed unit does not set the mirror given:\n%s", installed)
	}
	verifyUnit(t, dest, "/opt/paddock", installed)
}
