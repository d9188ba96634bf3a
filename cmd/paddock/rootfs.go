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
// all of --templates), the missing ones at the same time, and prints where
// each one is.
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
	var tmpls []templates.Template
	for _, name := range names {
		t, err := cfg.template(name)
		if err != nil {
			return err
		}
		tmpls = append(tmpls, t)
	}
	imgs, err := rootfs.EnsureAll(ctx, cfg.builder(os.Stderr, logger), tmpls, true)
	for i, img := range imgs {
		if img.Path != "" {
			fmt.Printf("%s\t%s\n", tmpls[i].Name, img.Path)
		}
	}
	return err
}
