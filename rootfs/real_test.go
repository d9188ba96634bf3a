package rootfs

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/paddock-dev/paddock/internal/prereq"
	"github.com/paddock-dev/paddock/templates"
)

// TestRealBuild builds the node template with the real mmdebstrap from the
// host's Debian mirror (about 30 s). It runs only with PADDOCK_ROOTFS_TEST=1.
func TestRealBuild(t *testing.T) {
	if os.Getenv("PADDOCK_ROOTFS_TEST") != "1" {
		prereq.Missing(t, "PADDOCK_ROOTFS_TEST is not 1", "set PADDOCK_ROOTFS_TEST=1 to build a real root filesystem (make test does)")
	}
	requireRoot(t)
	tmpl, err := templates.Get("node")
	if err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	b := &Builder{CacheDir: t.TempDir(), Progress: &out}
	img, err := b.Ensure(t.Context(), tmpl)
	if err != nil {
		t.Fatalf("Ensure: %v\n%s", err, out.String())
	}
	t.Logf("built %s: %d MB, versions %v", img.Path, img.SizeBytes>>20, img.Versions)

	if fi, err := os.Stat(filepath.Join(img.Path, "usr/bin/node")); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("usr/bin/node missing or not executable: %v", err)
	}
	passwd, err := os.ReadFile(filepath.Join(img.Path, "etc/passwd"))
	if err != nil || !strings.Contains(string(passwd), "\nsandbox:x:1000:1000:") {
		t.Errorf("etc/passwd has no sandbox user with uid 1000: %v\n%s", err, passwd)
	}
	if !strings.HasPrefix(img.Versions["node"], "v18.") {
		t.Errorf("node version = %q, want Debian's v18.x", img.Versions["node"])
	}

	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(t.Context(), "chroot", "--userspec=1000:1000", img.Path, "/usr/bin/node", "-e", "console.log(1)")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/workspace"}
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stdout.String() != "1\n" || stderr.Len() != 0 {
		t.Errorf("node as uid 1000: %v, stdout %q, stderr %q", err, stdout.String(), stderr.String())
	}

	// Nothing but /workspace and /tmp is writable by the sandbox user.
	err = filepath.WalkDir(img.Path, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(img.Path, path)
		if rel == "workspace" || rel == "tmp" || rel == "dev" {
			return fs.SkipDir
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		if fi.Mode().Perm()&0o002 != 0 || st.Uid == 1000 || st.Gid == 1000 || (fi.Mode().IsRegular() && fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid) != 0) {
			t.Errorf("%s: mode %v owner %d:%d", rel, fi.Mode(), st.Uid, st.Gid)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRealBuildOnAnotherRelease builds the node template (a bookworm
// template) as a Debian 13 host would: its apt sources list only trixie,
// so the builder must take bookworm from the same mirror. The host's own
// Debian mirror stands in for the trixie host's. It runs only with
// PADDOCK_ROOTFS_TEST=1.
func TestRealBuildOnAnotherRelease(t *testing.T) {
	if os.Getenv("PADDOCK_ROOTFS_TEST") != "1" {
		t.Skip("set PADDOCK_ROOTFS_TEST=1 to build a real root filesystem")
	}
	requireRoot(t)
	host, err := readAptSources(hostAptDir)
	if err != nil {
		t.Fatal(err)
	}
	var mirror, security source
	for _, s := range host {
		if mirror.uri == "" && isDebianArchive(s) {
			mirror = s
		}
		if security.uri == "" && isDebianSecurity(s) {
			security = s
		}
	}
	if mirror.uri == "" {
		t.Fatalf("this host's apt sources have no Debian mirror to stand in for a trixie host's:\n%v", host)
	}
	aptDir := t.TempDir()
	stanza := func(uri, suites, signedBy string) string {
		s := "Types: deb\nURIs: " + uri + "\nSuites: " + suites + "\nComponents: main\n"
		if signedBy != "" {
			s += "Signed-By: " + signedBy + "\n"
		}
		return s
	}
	sources := stanza(mirror.uri, "trixie trixie-updates", mirror.signedBy)
	if security.uri != "" {
		sources += "\n" + stanza(security.uri, "trixie-security", security.signedBy)
	}
	if err := os.MkdirAll(filepath.Join(aptDir, "sources.list.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(aptDir, "sources.list.d", "debian.sources"), []byte(sources), 0o644); err != nil {
		t.Fatal(err)
	}

	tmpl, err := templates.Get("node")
	if err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	b := &Builder{CacheDir: t.TempDir(), Progress: &out, aptDir: aptDir}
	img, err := b.Ensure(t.Context(), tmpl)
	if err != nil {
		t.Fatalf("Ensure: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"[rootfs node] building node-" + tmpl.Key() + ": " + strconv.Itoa(len(tmpl.Packages)) + " packages, 0 stubs; the host's apt sources list trixie, not bookworm: bookworm from the host's Debian mirror\n",
		" " + mirror.uri + " bookworm main; ",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.HasPrefix(img.Versions["node"], "v18.") {
		t.Errorf("node version = %q, want bookworm's v18.x", img.Versions["node"])
	}
}
