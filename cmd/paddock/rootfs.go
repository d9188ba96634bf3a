package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/paddock-dev/paddock/rootfs"
	"github.com/paddock-dev/paddock/templates"
)

// rootfsCmd builds the root filesystems of the named templates (default:
// all of --templates) and prints where each one is.
func rootfsCmd(ctx context.Context, args []string) error {
	cfg, fs, err := parse("rootfs", args)
	if err != nil {
		return err
	}
	names := fs.Args()
	if len(names) == 0 {
		names = cfg.Templates
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	builder := &rootfs.Builder{CacheDir: cfg.CacheDir, Progress: os.Stderr, Logger: logger}
	for _, name := range names {
		t, err := templates.Get(name)
		if err != nil {
			return fmt.Errorf("template %q: %w", name, err)
		}
		img, err := builder.Ensure(ctx, t)
		if err != nil {
			return fmt.Errorf("building %s: %w", name, err)
		}
		fmt.Printf("%s\t%s\n", name, img.Path)
	}
	return nil
}
