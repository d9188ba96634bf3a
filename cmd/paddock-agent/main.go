package main

import (
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/paddock-dev/paddock/runner/agent"
	"github.com/paddock-dev/paddock/runner/ocispec"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "paddock-agent:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	cfg, debug, err := parseFlags(args, os.Stderr)
	if err != nil {
		return err
	}
	level := slog.LevelInfo
	if debug {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	a, err := agent.New(cfg, log)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return a.Serve(ctx, agent.Quiet(polled(os.Stdin)), agent.Quiet(polled(os.Stdout)))
}

// polled is f, fd 0 or 1, made non-blocking so that Go's network poller
// waits for the host's frames (or for room for the agent's) rather than a
// thread blocked in read(2) or write(2); agent.Quiet then reads and writes
// it without waking the runtime's monitor. A blocked
// read has the runtime's monitor wake up to hand the thread's processor to
// another, and the reader wake another thread for every frame; under
// gVisor each such wake is a switch the Sentry pays for in a kernel cell's
// round trip. Where fd 0 cannot be polled, f is returned as it is.
func polled(f *os.File) *os.File {
	if err := syscall.SetNonblock(int(f.Fd()), true); err != nil {
		return f
	}
	return os.NewFile(f.Fd(), f.Name())
}

// parseFlags turns the command line into the agent's config.
func parseFlags(args []string, errOut io.Writer) (agent.Config, bool, error) {
	fs := flag.NewFlagSet("paddock-agent", flag.ContinueOnError)
	fs.SetOutput(errOut)
	var (
		cfg    agent.Config
		warmup string
		debug  bool
	)
	fs.StringVar(&cfg.Language, "language", agent.LanguagePython, "interpreter to drive: python or node")
	fs.StringVar(&cfg.Interpreter, "interpreter", "", "interpreter path or name on "+agent.SearchPath+" (default python3 or node)")
	fs.IntVar(&cfg.UID, "uid", ocispec.UID, "user that runs the code (0 with --gid 0: the agent's own)")
	fs.IntVar(&cfg.GID, "gid", ocispec.GID, "group that runs the code")
	fs.StringVar(&cfg.Workdir, "workdir", ocispec.WorkDir, "working directory and HOME of the code")
	fs.StringVar(&warmup, "warmup-b64", "", "base64 code the interpreter runs before it waits for the request")
	fs.IntVar(&cfg.HeapMB, "heap-mb", 0, "V8 heap ceiling in MiB (node's --max-old-space-size); 0 keeps V8's default")
	fs.StringVar(&cfg.NodeStartupDir, "node-startup-dir", ocispec.NodeStartupDir, "directory of node's startup snapshots, one per heap ceiling (node only; empty: none)")
	fs.BoolVar(&cfg.HostKernel, "host-kernel", false, "the sandbox runs on the host's Linux kernel (runc), not gVisor's: the interpreter counts against the process limit")
	fs.BoolVar(&debug, "debug", false, "log at debug level")
	if err := fs.Parse(args); err != nil {
		return agent.Config{}, false, err
	}
	if fs.NArg() > 0 {
		return agent.Config{}, false, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if warmup != "" {
		b, err := base64.StdEncoding.DecodeString(warmup)
		if err != nil {
			return agent.Config{}, false, fmt.Errorf("decoding --warmup-b64: %w", err)
		}
		cfg.Warmup = string(b)
	}
	if err := cfg.Validate(); err != nil {
		return agent.Config{}, false, err
	}
	return cfg, debug, nil
}
