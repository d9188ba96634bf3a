package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/paddock-dev/paddock/rootfs"
	"github.com/paddock-dev/paddock/templates"
)

// The driver tests run the templates' own interpreters, not the host's: the
// bytecode, tracebacks and REPL internals the drivers depend on differ
// between versions. Every agent under test starts in a private mount
// namespace and chroots into an overlay of its template's root filesystem,
// as it runs in a sandbox, with the host's temporary directory shared at its
// own path so that the tests see the working directories the agent uses.
//
// The images are looked up as the server does: in PADDOCK_CACHE (default
// /var/cache/paddock, the server's default --cache-dir) under the template's
// key. A missing image, or a user who cannot chroot, skips the test; under
// `make test` (PADDOCK_REQUIRE_GVISOR=1 or PADDOCK_ROOTFS_TEST=1) it fails
// it, naming what to run.

// testRootEnv, when set, makes the test binary enter the testRoot it holds
// (JSON) before it runs as the agent.
const testRootEnv = "PADDOCK_AGENT_TEST_ROOT"

// testRoot is the root directory an agent under test runs in.
type testRoot struct {
	// Image is the template's root filesystem: the read-only lower layer
	// of an overlay, so that nothing the test does reaches the shared cache.
	Image string `json:"image"`
	// Scratch is an empty host directory. The agent mounts a tmpfs on it,
	// in its own mount namespace, for the overlay's upper layer and its
	// mount point.
	Scratch string `json:"scratch"`
	// Shared are host directories mounted at their own paths inside.
	Shared []string `json:"shared"`
}

// templateImages are the root filesystems of the python and node
// templates by language, or why one is missing; looked up once.
var (
	templateImagesOnce sync.Once
	templateImages     map[string]rootfs.Image
	templateImagesErr  map[string]error
)

// testCacheDir is the cache the images are looked up in.
func testCacheDir() string {
	if dir := os.Getenv("PADDOCK_CACHE"); dir != "" {
		return dir
	}
	return "/var/cache/paddock"
}

func lookupTemplateImages() {
	templateImages, templateImagesErr = map[string]rootfs.Image{}, map[string]error{}
	builder := &rootfs.Builder{CacheDir: testCacheDir()}
	// The templates are named after their languages.
	for _, language := range []string{LanguagePython, LanguageNode} {
		tmpl, err := templates.Get(language)
		if err == nil && tmpl.Language != language {
			err = fmt.Errorf("template %s is for %s", language, tmpl.Language)
		}
		if err != nil {
			templateImagesErr[language] = err
			continue
		}
		if templateImages[language], err = builder.Lookup(tmpl); err != nil {
			templateImagesErr[language] = err
		}
	}
}

// templateImage returns the root filesystem of language's template, or
// skips the test (fails it under `make test`) when the image is missing or
// the test cannot chroot.
func templateImage(t testing.TB, language string) rootfs.Image {
	t.Helper()
	templateImagesOnce.Do(lookupTemplateImages)
	var why string
	if err := templateImagesErr[language]; err != nil {
		why = fmt.Sprintf("no root filesystem of the %s template: %v (`make rootfs` builds it; PADDOCK_CACHE names the cache)", language, err)
	} else if os.Getuid() != 0 {
		why = "entering the template's root filesystem needs root to mount and chroot (run the tests as root, as `make test` does)"
	} else {
		return templateImages[language]
	}
	if os.Getenv("PADDOCK_REQUIRE_GVISOR") == "1" || os.Getenv("PADDOCK_ROOTFS_TEST") == "1" {
		t.Fatalf("the driver tests run the template's own interpreter: %s", why)
	}
	t.Skipf("the driver tests run the template's own interpreter: %s", why)
	return rootfs.Image{}
}

// newTestRoot returns the root an agent for cfg runs in.
func newTestRoot(t testing.TB, cfg Config) testRoot {
	t.Helper()
	img := templateImage(t, cfg.Language)
	tmp := filepath.Clean(os.TempDir())
	if rel, err := filepath.Rel(tmp, cfg.Workdir); err != nil || !filepath.IsLocal(rel) {
		t.Fatalf("workdir %s is not in %s, which is all the agent shares with the host", cfg.Workdir, tmp)
	}
	return testRoot{Image: img.Path, Scratch: t.TempDir(), Shared: []string{tmp}}
}

// enterTestRoot makes the process's root directory an overlay of r.Image
// with proc, the host's /dev and /sys, and r.Shared mounted in it. The
// process must have started in a mount namespace of its own: every thread
// shares it and the root directory, and nothing mounted here reaches the
// host.
func enterTestRoot(raw string) error {
	var r testRoot
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		return fmt.Errorf("decoding the test root: %w", err)
	}
	if strings.ContainsAny(r.Image, ",:") {
		return fmt.Errorf("image path %s cannot be an overlay layer", r.Image)
	}
	// Whatever the host's propagation, mounts stay in this namespace.
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %w", err)
	}
	if err := syscall.Mount("tmpfs", r.Scratch, "tmpfs", 0, "mode=0755"); err != nil {
		return fmt.Errorf("mounting the scratch tmpfs: %w", err)
	}
	// The overlay's options name its upper and work directories relative
	// to the scratch directory, whose path (a test's name) may hold a comma.
	if err := os.Chdir(r.Scratch); err != nil {
		return err
	}
	for _, d := range []string{"upper", "work", "root"} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	root := filepath.Join(r.Scratch, "root")
	if err := syscall.Mount("overlay", root, "overlay", 0, "lowerdir="+r.Image+",upperdir=upper,workdir=work"); err != nil {
		return fmt.Errorf("mounting an overlay of %s: %w", r.Image, err)
	}
	// The host directories are opened before the chroot and mounted after
	// it, through /proc/self/fd: their mount points are then created and
	// found inside the new root, where no symbolic link of the image can
	// lead a mount or a directory onto the host.
	type bind struct {
		src, dst string
		flags    uintptr
	}
	binds := []bind{
		{"/dev", "/dev", syscall.MS_BIND | syscall.MS_REC},
		{"/sys", "/sys", syscall.MS_BIND | syscall.MS_REC},
	}
	for _, dir := range r.Shared {
		binds = append(binds, bind{dir, dir, syscall.MS_BIND})
	}
	srcs := make([]*os.File, len(binds))
	for i, b := range binds {
		f, err := os.Open(b.src)
		if err != nil {
			return err
		}
		defer f.Close()
		srcs[i] = f
	}
	if err := syscall.Chroot(root); err != nil {
		return fmt.Errorf("chroot: %w", err)
	}
	if err := os.Chdir("/"); err != nil {
		return fmt.Errorf("entering the new root: %w", err)
	}
	// A fresh proc, of the agent's PID namespace.
	if err := syscall.Mount("proc", "/proc", "proc", 0, ""); err != nil {
		return fmt.Errorf("mounting proc: %w", err)
	}
	for i, b := range binds {
		if err := os.MkdirAll(b.dst, 0o755); err != nil {
			return err
		}
		if err := syscall.Mount(fmt.Sprintf("/proc/self/fd/%d", srcs[i].Fd()), b.dst, "", b.flags, ""); err != nil {
			return fmt.Errorf("mounting %s on %s: %w", b.src, b.dst, err)
		}
	}
	return nil
}
