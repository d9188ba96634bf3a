package rootfs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/paddock-dev/paddock/templates"
)

// logKeyTemplate is the slog attribute key naming a template.
const logKeyTemplate = "template"

// defaultHeartbeat is how long mmdebstrap may stay quiet before the builder
// reports that it is still at work.
const defaultHeartbeat = 15 * time.Second

// Builder builds template root filesystems and caches them on disk. Set the
// exported fields before first use; a Builder must not be copied after
// that. It is safe for concurrent use.
type Builder struct {
	// CacheDir holds the images, under CacheDir/rootfs/<language>-<key>/.
	CacheDir string
	// Mirror, when set, is the Debian archive URI to build from (for
	// example http://deb.debian.org/debian), checked against the Debian
	// archive keyring. Empty means the host's apt configuration: its
	// entries for the template's suite when it lists that suite, else the
	// template's suite from the host's Debian mirror, else ErrNoMirror.
	// Security updates come from the host's Debian security archive when
	// it lists one.
	Mirror string
	// Progress receives human-readable progress lines while building. Nil
	// means none.
	Progress io.Writer
	// Logger receives structured logs. Nil means none.
	Logger *slog.Logger

	aptDir     string        // host apt configuration; hostAptDir when empty
	keyringDir string        // where the Debian archive keyring is; hostKeyringDir when empty
	mmdebstrap string        // mmdebstrap program; looked up in PATH when empty
	heartbeat  time.Duration // defaultHeartbeat when zero

	mu      sync.Mutex
	flights map[string]*flight
}

// Image is a built root filesystem.
type Image struct {
	// Template is the name of the template whose build made the image.
	// Every template with the same Key shares it.
	Template string
	// Key is the template's Key when the image was built.
	Key string
	// Path is the root filesystem directory, what an OCI bundle's
	// root.path points to. Nothing may write to it.
	Path string
	// Versions are the outputs of the template's version commands.
	Versions map[string]string
	// BuiltAt is when the build finished.
	BuiltAt time.Time
	// SizeBytes is the disk space the root filesystem uses.
	SizeBytes int64
}

// Lookup returns the cached image of t, or ErrNotBuilt. It never builds.
func (b *Builder) Lookup(t templates.Template) (Image, error) {
	if b.CacheDir == "" {
		return Image{}, errors.New("rootfs builder has no cache directory")
	}
	if err := t.Validate(); err != nil {
		return Image{}, fmt.Errorf("looking up rootfs: %w", err)
	}
	return lookup(b.imageDir(t), t)
}

// Ensure returns the cached image of t, building it first if needed.
// Concurrent calls for one image build it once, in this process and across
// processes sharing CacheDir.
func (b *Builder) Ensure(ctx context.Context, t templates.Template) (Image, error) {
	img, err := b.Lookup(t)
	if !errors.Is(err, ErrNotBuilt) {
		return img, err
	}
	return b.once(ctx, imageName(t), func() (Image, error) {
		return b.buildLocked(ctx, t)
	})
}

// plan returns the apt sources to build suite from: Mirror's when it is
// set, else the host's (see hostPlan).
func (b *Builder) plan(suite string) (plan, error) {
	aptDir := cmp.Or(b.aptDir, hostAptDir)
	keyring := findKeyring(cmp.Or(b.keyringDir, hostKeyringDir))
	host, err := readAptSources(aptDir)
	if b.Mirror == "" {
		if err != nil {
			return plan{}, err
		}
		return hostPlan(host, suite, aptDir, keyring)
	}
	if err := CheckMirror(b.Mirror); err != nil {
		return plan{}, err
	}
	if err != nil {
		b.logger().Warn("reading host apt sources for security updates", "err", err)
	}
	return plan{
		sources: mirrorSources(b.Mirror, keyring, host, suite, keyring),
		why:     "the mirror " + b.Mirror + " was given",
	}, nil
}

// Sources returns the apt source lines that a build of suite would use,
// in apt's one-line format, and why they were chosen. It builds nothing.
func (b *Builder) Sources(suite string) (lines []string, why string, err error) {
	p, err := b.plan(suite)
	if err != nil {
		return nil, "", err
	}
	for _, s := range p.sources {
		lines = append(lines, s.line())
	}
	return lines, p.why, nil
}

func (b *Builder) logger() *slog.Logger {
	if b.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return b.Logger
}

// imagesDir holds every image, lock file and build in progress.
func (b *Builder) imagesDir() string { return filepath.Join(b.CacheDir, "rootfs") }

// imageDir is where t's complete image lives.
func (b *Builder) imageDir(t templates.Template) string {
	return filepath.Join(b.imagesDir(), imageName(t))
}

// imageName names t's image by what it holds: the key, after the language
// for people reading the cache. Templates that differ only in what their
// sandboxes do with the same packages (python and python-slim) share one
// image, and so one build.
func imageName(t templates.Template) string { return t.Language + "-" + t.Key() }
