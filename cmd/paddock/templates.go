package main

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/paddock-dev/paddock/rootfs"
	"github.com/paddock-dev/paddock/templates"
)

// template returns the named template with the configured suite, if any,
// in place of its own (which changes its image key).
func (c *config) template(name string) (templates.Template, error) {
	t, err := templates.Get(name)
	if err != nil {
		return templates.Template{}, fmt.Errorf("template %q: %w", name, err)
	}
	t, err = t.OnSuite(c.Suite)
	if err != nil {
		return templates.Template{}, fmt.Errorf("--suite %q: %w", c.Suite, err)
	}
	return t, nil
}

// builder returns a root filesystem builder for the configured cache and
// mirror.
func (c *config) builder(progress io.Writer, logger *slog.Logger) *rootfs.Builder {
	return &rootfs.Builder{CacheDir: c.CacheDir, Mirror: c.Mirror, Progress: progress, Logger: logger}
}
