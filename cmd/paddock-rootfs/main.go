// Command paddock-rootfs builds the template root filesystems into the
// cache, as `paddock rootfs` does, from a binary of a quarter of the
// server's packages and no cgo: on a fresh machine `make install` starts
// the downloads after compiling this, not the whole server, and so takes
// the root filesystems off the critical path.
//
// Usage: paddock-rootfs [--cache-dir DIR] [--mirror URL] [--suite S] [TEMPLATE...]
// (default: node, python and python-slim; PADDOCK_CACHE, PADDOCK_MIRROR,
// PADDOCK_SUITE and PADDOCK_TEMPLATES are the defaults of the flags). It
// prints each template's name and root filesystem directory.
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/paddock-dev/paddock/rootfs"
	"github.com/paddock-dev/paddock/templates"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "paddock-rootfs:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("paddock-rootfs", flag.ContinueOnError)
	cache := fs.String("cache-dir", cmp.Or(os.Getenv("PADDOCK_CACHE"), "/var/cache/paddock"), "cache of root filesystems")
	mirror := fs.String("mirror", os.Getenv("PADDOCK_MIRROR"), "Debian mirror to build from (default: the one in the host's apt sources)")
	suite := fs.String("suite", os.Getenv("PADDOCK_SUITE"), "Debian suite to build every template from in place of its own")
	if err := fs.Parse(args); err != nil {
		return err
	}
	names := fs.Args()
	if len(names) == 0 {
		names = strings.Split(cmp.Or(os.Getenv("PADDOCK_TEMPLATES"), "node,python,python-slim"), ",")
	}
	var tmpls []templates.Template
	for _, name := range names {
		t, err := templates.Get(strings.TrimSpace(name))
		if err != nil {
			return fmt.Errorf("template %q: %w", name, err)
		}
		if t, err = t.OnSuite(*suite); err != nil {
			return fmt.Errorf("--suite %q: %w", *suite, err)
		}
		tmpls = append(tmpls, t)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	b := &rootfs.Builder{CacheDir: *cache, Mirror: *mirror, Progress: os.Stderr, Logger: logger}
	imgs, err := rootfs.EnsureAll(ctx, b, tmpls, true)
	for i, img := range imgs {
		if img.Path != "" {
			fmt.Printf("%s\t%s\n", tmpls[i].Name, img.Path)
		}
	}
	return err
}
