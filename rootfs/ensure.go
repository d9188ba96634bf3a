package rootfs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/paddock-dev/paddock/templates"
)

// MirrorHint names the setting that fixes a missing Debian mirror.
const MirrorHint = "set --mirror or PADDOCK_MIRROR to a Debian mirror, e.g. http://deb.debian.org/debian"

// BuildError wraps a failed build of a template's root filesystem, saying
// which setting to use when the host has no Debian mirror.
func BuildError(name string, err error) error {
	if errors.Is(err, ErrNoMirror) {
		return fmt.Errorf("root filesystem of %s: %w: %s", name, err, MirrorHint)
	}
	return fmt.Errorf("root filesystem of %s: %w", name, err)
}

// EnsureAll returns the image of each template, in order, building the
// missing ones at the same time when build is true: the builds share
// little but the network, so two take hardly longer than the larger one.
// Each failure is a BuildError; the images of the others are returned.
func EnsureAll(ctx context.Context, b *Builder, tmpls []templates.Template, build bool) ([]Image, error) {
	imgs := make([]Image, len(tmpls))
	errs := make([]error, len(tmpls))
	var missing []int
	for i, t := range tmpls {
		imgs[i], errs[i] = b.Lookup(t)
		if errors.Is(errs[i], ErrNotBuilt) && build {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 && b.Progress != nil {
		fmt.Fprintf(b.Progress, "[rootfs] building %s at the same time (usually 2 to 3 min on 2 cores, mostly downloading and unpacking packages)\n",
			strings.Join(distinctNames(tmpls, missing), " and "))
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
			errs[i] = BuildError(tmpls[i].Name, err)
		}
	}
	return imgs, errors.Join(errs...)
}

// distinctNames names the templates at idx, one per image: templates with
// one key share one image, built once.
func distinctNames(tmpls []templates.Template, idx []int) []string {
	var names []string
	seen := map[string]bool{}
	for _, i := range idx {
		if key := tmpls[i].Key(); !seen[key] {
			seen[key] = true
			names = append(names, tmpls[i].Name)
		}
	}
	return names
}
