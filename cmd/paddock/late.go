package main

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/paddock-dev/paddock/rootfs"
	"github.com/paddock-dev/paddock/templates"
)

// A server that finds a template's root filesystem missing at start (a
// fresh machine, a new template) builds it while serving the others: the
// template's pool is deferred, its requests are refused with
// template_building until the build is done, and /readyz says which
// templates serve. Builds of one image share it, in this process and
// with a `paddock rootfs` running beside the server (the builder's lock).

// ensureFunc returns a template's image, building it if needed
// (rootfs.Builder.Ensure).
type ensureFunc func(context.Context, templates.Template) (rootfs.Image, error)

// lookupImages returns each template's cached image; with build, a
// missing one is not an error but late (built by buildLate), else every
// missing image is named in the error.
func lookupImages(lookup func(templates.Template) (rootfs.Image, error), tmpls []templates.Template, build bool) ([]rootfs.Image, []bool, error) {
	imgs := make([]rootfs.Image, len(tmpls))
	late := make([]bool, len(tmpls))
	var errs []error
	for i, t := range tmpls {
		img, err := lookup(t)
		switch {
		case err == nil:
			imgs[i] = img
		case errors.Is(err, rootfs.ErrNotBuilt) && build:
			late[i] = true
		default:
			errs = append(errs, rootfs.BuildError(t.Name, err))
		}
	}
	return imgs, late, errors.Join(errs...)
}

// imageID identifies an image for snapshot keys: its key and when it was
// built, so that a rebuilt image never restores an old snapshot.
func imageID(img rootfs.Image) string {
	return img.Key + "@" + img.BuiltAt.UTC().Format(time.RFC3339Nano)
}

// buildLate builds the late templates' root filesystems at the same time
// and hands each to its pool and to the core as it is done; a failed one
// is logged and its requests are refused as template_unavailable.
// Cancelling ctx (Close) stops the builds.
func (st *stack) buildLate(ctx context.Context, ensure ensureFunc, tmpls []templates.Template, late []bool) {
	for i, t := range tmpls {
		if !late[i] {
			continue
		}
		st.log.Info("serving while this template's root filesystem is built; its requests are refused with template_building until then",
			"template", t.Name)
		st.builds.Go(func() {
			start := time.Now()
			img, err := ensure(ctx, t)
			if err == nil {
				err = st.Pool.Provide(t.Name, img.Path, imageID(img))
			}
			if err != nil {
				if ctx.Err() == nil {
					st.log.Error("building a template's root filesystem; its requests are refused", "template", t.Name,
						"err", rootfs.BuildError(t.Name, err))
				}
				_ = st.Pool.Fail(t.Name)
				return
			}
			st.Core.SetTemplateVersions(t.Name, img.Versions)
			st.log.Info("template root filesystem ready; its pool fills", "template", t.Name,
				"waited", time.Since(start).Round(time.Millisecond), slog.String("path", img.Path))
		})
	}
}
