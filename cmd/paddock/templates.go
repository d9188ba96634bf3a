package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/paddock-dev/paddock/rootfs"
	"github.com/paddock-dev/paddock/templates"
)

// mirrorHint names the setting that fixes a missing Debian mirror.
const mirrorHint = "set --mirror or PADDOCK_MIRROR to a Debian mirror, e.g. http://deb.debian.org/debian"

// template returns the named template with the configured suite, if any,
// in place of its own (which changes its image key).
func (c *config) template(name string) (templates.Template, error) {
	t, err := templates.Get(name)
	if err != nil {
		return templates.Template{}, fmt.Errorf("template %q: %w", name, err)
	}
	if c.Suite != "" {
		t.Suite = c.Suite
		if err := t.Validate(); err != nil {
			return templates.Template{}, fmt.Errorf("--suite %q: %w", c.Suite, err)
		}
	}
	return t, nil
}

// builder returns a root filesystem builder for the configured cache and
// mirror.
func (c *config) builder(progress io.Writer, logger *slog.Logger) *rootfs.Builder {
	return &rootfs.Builder{CacheDir: c.CacheDir, Mirror: c.Mirror, Progress: progress, Logger: logger}
}

// buildError wraps a failed build of a template's root filesystem, saying
// which setting to use when the host has no Debian mirror.
func buildError(name string, err error) error {
	if errors.Is(err, rootfs.ErrNoMirror) {
		return fmt.Errorf("root filesystem of %s: %w: %s", name, err, mirrorHint)
	}
	return fmt.Errorf("root filesystem of %s: %w", name, err)
}

// ensureImages returns the image of each template, in order, building the
// missing ones at the same time when build is true: the builds share
// little but the network, so two take hardly longer than the larger one.
func ensureImages(ctx context.Context, b *rootfs.Builder, tmpls []templates.Template, build bool) ([]rootfs.Image, error) {
	imgs := make([]rootfs.Image, len(tmpls))
	errs := make([]error, len(tmpls))
	var missing []int
	for i, t := range tmpls {
		imgs[i], errs[i] = b.Lookup(t)
		if errors.Is(errs[i], rootfs.ErrNotBuilt) && build {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 && b.Progress != nil {
		var names []string
		seen := map[string]bool{}
		for _, i := range missing {
			// Templates with one key share one image, built once.
			if key := tmpls[i].Key(); !seen[key] {
				seen[key] = true
				names = append(names, tmpls[i].Name)
			}
		}
		fmt.Fprintf(b.Progress, "[rootfs] building %s at the same time (usually 1 to 2 min on 2 cores, mostly downloading and unpacking packages)\n",
			strings.Join(names, " and "))
	}
	var wg sync.WaitGroup
	for _, i := range missing {
		wg.Go(func() {
			imgs[i], errs[i] = b.Ensure(ctx, tmpls[i])
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			errs[i] = buildError(tmpls[i].Name, err)
		}
	}
	return imgs, errors.Join(errs...)
}
