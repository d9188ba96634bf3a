package rootfs

import (
	"context"
	"errors"
	"fmt"
	"github.com/paddock-dev/paddock/internal/filelock"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/paddock-dev/paddock/templates"
)

// tmpInfix names a build in progress: <language>-<key>.tmp-<random>.
const tmpInfix = ".tmp-"

// buildLocked builds t's image while holding its lock file, unless another
// process built it while this one waited for the lock.
func (b *Builder) buildLocked(ctx context.Context, t templates.Template) (Image, error) {
	if err := os.MkdirAll(b.imagesDir(), 0o755); err != nil {
		return Image{}, fmt.Errorf("creating image cache: %w", err)
	}
	name := imageName(t)
	lock, err := filelock.Acquire(ctx, filepath.Join(b.imagesDir(), name+".lock"), filelock.Exclusive, func() {
		newProgress(b.Progress, "[rootfs "+t.Name+"] ").printf("waiting for another build of %s", name)
	})
	if err != nil {
		return Image{}, err
	}
	defer lock.Release()
	img, err := b.Lookup(t)
	if !errors.Is(err, ErrNotBuilt) {
		return img, err
	}
	if err := b.removeLeftovers(t); err != nil {
		return Image{}, err
	}
	return b.build(ctx, t)
}

// removeLeftovers removes what interrupted builds of t left behind: their
// temporary directories and an incomplete image directory. The caller
// holds t's lock, so no build of t is running.
func (b *Builder) removeLeftovers(t templates.Template) error {
	stale, err := filepath.Glob(filepath.Join(b.imagesDir(), imageName(t)+tmpInfix+"*"))
	if err != nil {
		return fmt.Errorf("listing stale builds: %w", err)
	}
	for _, dir := range append(stale, b.imageDir(t)) {
		if err := removeTree(dir); err != nil {
			return fmt.Errorf("removing stale build: %w", err)
		}
	}
	if len(stale) > 0 {
		b.logger().Info("removed stale rootfs builds", logKeyTemplate, t.Name, "dirs", stale)
	}
	return nil
}

// build runs mmdebstrap into a temporary directory, customizes the tree,
// records versions and metadata, then renames the directory into place.
func (b *Builder) build(ctx context.Context, t templates.Template) (_ Image, err error) {
	start := time.Now()
	name := imageName(t)
	log := b.logger().With(logKeyTemplate, t.Name, "key", t.Key())
	prog := newProgress(b.Progress, "[rootfs "+t.Name+"] ")
	if os.Geteuid() != 0 {
		return Image{}, fmt.Errorf("building rootfs %s: mmdebstrap --mode=root needs root", name)
	}
	bin, err := b.mmdebstrapPath()
	if err != nil {
		return Image{}, err
	}
	plan, err := b.plan(t.Suite)
	if err != nil {
		return Image{}, err
	}
	sources := plan.sources

	tmp, err := os.MkdirTemp(b.imagesDir(), name+tmpInfix)
	if err != nil {
		return Image{}, fmt.Errorf("creating build directory: %w", err)
	}
	defer func() {
		if err != nil {
			cleanupErr := removeTree(tmp)
			err = errors.Join(err, cleanupErr)
		}
	}()
	tree := filepath.Join(tmp, treeDir)
	if err := errors.Join(os.Chmod(tmp, 0o755), os.Mkdir(tree, 0o755)); err != nil {
		return Image{}, fmt.Errorf("creating build directory: %w", err)
	}
	stubDir, err := prepareStubs(t.StubPackages)
	if err != nil {
		return Image{}, err
	}
	defer os.RemoveAll(stubDir)

	var lines []string
	for _, s := range sources {
		lines = append(lines, s.line())
	}
	prog.printf("building %s: %d packages, %d stubs; %s", name, len(t.Packages), len(t.StubPackages), plan.why)
	prog.printf("sources: %s", strings.Join(lines, "; "))
	log.Info("building rootfs", "packages", len(t.Packages), "sources", lines)
	args := mmdebstrapArgs(t, tree, sources, stubDir)
	log.Debug("running mmdebstrap", "argv", append([]string{bin}, args...))
	if err := b.runMmdebstrap(ctx, prog, bin, args, start); err != nil {
		return Image{}, err
	}
	return b.finish(ctx, t, tmp, lines, prog, start)
}

// prepareStubs writes the stub packages into a fresh directory under /tmp
// (see mmdebstrapArgs). It returns "" when there are none.
func prepareStubs(names []string) (string, error) {
	if len(names) == 0 {
		return "", nil
	}
	dir, err := os.MkdirTemp("/tmp", "paddock-stubs-")
	if err != nil {
		return "", fmt.Errorf("creating stub directory: %w", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", errors.Join(fmt.Errorf("creating stub directory: %w", err), os.RemoveAll(dir))
	}
	if err := writeStubDebs(dir, names); err != nil {
		return "", errors.Join(err, os.RemoveAll(dir))
	}
	return dir, nil
}
