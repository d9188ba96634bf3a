package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// config is everything `paddock serve` needs, parsed from flags with
// PADDOCK_* environment variables as defaults.
type config struct {
	Listen       string
	CacheDir     string
	StateDir     string
	Runsc        string
	Agent        string
	Platform     string
	Templates    []string
	PoolSize     int // -1: each template's own size
	MaxRuns      int
	MaxSessions  int
	MaxTimeout   time.Duration
	MaxBody      int64
	MaxOutput    int64
	BuildRootfs  bool
	ShutdownWait time.Duration
	LogLevel     slog.Level
}

// registerFlags binds the flags shared by serve, doctor and rootfs.
func (c *config) registerFlags(fs *flag.FlagSet) {
	exe, _ := os.Executable()
	fs.StringVar(&c.Listen, "listen", env("PADDOCK_LISTEN", "127.0.0.1:8080"), "address to serve the API on")
	fs.StringVar(&c.CacheDir, "cache-dir", env("PADDOCK_CACHE", "/var/cache/paddock"), "cache of root filesystems and runsc builds")
	fs.StringVar(&c.StateDir, "state-dir", env("PADDOCK_STATE", "/var/lib/paddock"), "runsc state, bundles and the agent copy (owned by this server)")
	fs.StringVar(&c.Runsc, "runsc", env("PADDOCK_RUNSC", ""), "runsc binary (static build; see `make runsc`)")
	fs.StringVar(&c.Agent, "agent", env("PADDOCK_AGENT", filepath.Join(filepath.Dir(exe), "paddock-agent")), "static paddock-agent binary")
	fs.StringVar(&c.Platform, "platform", env("PADDOCK_PLATFORM", "systrap"), "gVisor platform: systrap or ptrace")
	c.Templates = splitList(env("PADDOCK_TEMPLATES", "node,python"))
	fs.Func("templates", "comma-separated templates to serve (default node,python)", func(v string) error {
		c.Templates = splitList(v)
		return nil
	})
	fs.IntVar(&c.PoolSize, "pool-size", -1, "ready sandboxes per template (-1: the template's own pool_size)")
	fs.IntVar(&c.MaxRuns, "max-runs", 16, "concurrent one-shot runs")
	fs.IntVar(&c.MaxSessions, "max-sessions", 64, "open sessions; beyond it creating one answers 429")
	fs.DurationVar(&c.MaxTimeout, "max-timeout", 60*time.Second, "largest wall-time limit a request may ask for")
	fs.Int64Var(&c.MaxBody, "max-body", 10<<20, "request body limit in bytes")
	fs.Int64Var(&c.MaxOutput, "max-output", 1<<20, "per-stream output cap in bytes (default and maximum)")
	fs.BoolVar(&c.BuildRootfs, "build-rootfs", true, "build missing template root filesystems at start")
	fs.DurationVar(&c.ShutdownWait, "shutdown-wait", 30*time.Second, "how long SIGTERM waits for in-flight runs")
	_ = c.LogLevel.UnmarshalText([]byte(env("PADDOCK_LOG_LEVEL", "info")))
	fs.TextVar(&c.LogLevel, "log-level", c.LogLevel, "debug, info, warn or error")
}

func env(key, def string) string {
	if v, ok := os.LookupEnv(key); ok && v != "" {
		return v
	}
	return def
}

// Validate checks the configuration before anything starts.
func (c *config) Validate() error {
	var errs []error
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		errs = append(errs, fmt.Errorf("--listen %q: %w", c.Listen, err))
	}
	if c.Runsc == "" {
		errs = append(errs, errors.New("--runsc is required (run `make runsc` or set PADDOCK_RUNSC)"))
	}
	if c.Platform != "systrap" && c.Platform != "ptrace" {
		errs = append(errs, fmt.Errorf("--platform %q: want systrap or ptrace", c.Platform))
	}
	if len(c.Templates) == 0 {
		errs = append(errs, errors.New("--templates is empty"))
	}
	if c.MaxRuns < 1 {
		errs = append(errs, errors.New("--max-runs must be at least 1"))
	}
	if c.MaxSessions < 1 {
		errs = append(errs, errors.New("--max-sessions must be at least 1"))
	}
	if c.MaxTimeout < time.Second {
		errs = append(errs, errors.New("--max-timeout must be at least 1s"))
	}
	if c.MaxBody < 1<<10 || c.MaxOutput < 1<<10 {
		errs = append(errs, errors.New("--max-body and --max-output must be at least 1 KiB"))
	}
	return errors.Join(errs...)
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
