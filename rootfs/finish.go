package rootfs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/paddock-dev/paddock/templates"
)

// finish turns the tree that mmdebstrap left in tmp into a complete image:
// it records versions, customizes the tree, writes the metadata, then
// renames tmp into place. On error the caller removes tmp.
func (b *Builder) finish(ctx context.Context, t templates.Template, tmp string, sources []string, prog *progress, start time.Time) (Image, error) {
	log := b.logger().With(logKeyTemplate, t.Name, "key", t.Key())
	tree := filepath.Join(tmp, treeDir)
	prog.printf("recording versions and preparing the tree")
	versions, err := recordVersions(ctx, tree, t.VersionCommands)
	if err != nil {
		return Image{}, err
	}
	if err := buildStartupSnapshots(ctx, tree, t); err != nil {
		return Image{}, err
	}
	if err := customize(tree); err != nil {
		return Image{}, fmt.Errorf("customizing rootfs: %w", err)
	}
	size, err := diskUsage(tree)
	if err != nil {
		return Image{}, fmt.Errorf("measuring rootfs: %w", err)
	}
	elapsed := time.Since(start)
	m := metadata{
		Template:     t.Name,
		Key:          t.Key(),
		Recipe:       templates.RecipeVersion,
		Suite:        t.Suite,
		Packages:     slices.Sorted(slices.Values(t.Packages)),
		StubPackages: slices.Sorted(slices.Values(t.StubPackages)),
		Sources:      sources,
		Versions:     versions,
		BuiltAt:      time.Now().UTC().Round(time.Second),
		BuildSeconds: elapsed.Round(100 * time.Millisecond).Seconds(),
		SizeBytes:    size,
	}
	if err := writeMetadata(tmp, m); err != nil {
		return Image{}, err
	}
	final := b.imageDir(t)
	if err := os.Rename(tmp, final); err != nil {
		return Image{}, fmt.Errorf("moving image into place: %w", err)
	}
	if err := syncDir(b.imagesDir()); err != nil {
		log.Warn("syncing image cache", "err", err)
	}
	prog.printf("built in %s, %d MB, at %s", elapsed.Round(100*time.Millisecond), size>>20, filepath.Join(final, treeDir))
	log.Info("built rootfs", "path", filepath.Join(final, treeDir), "seconds", m.BuildSeconds, "bytes", size, "versions", versions)
	return lookup(final, t)
}
