package main

import (
	"cmp"
	"log/slog"
	"path/filepath"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runc"
	"github.com/paddock-dev/paddock/runner/runsc"
)

// newRuntime makes the runtime --runtime names: gVisor's (the default) or
// runc's. Above cmd, everything knows it only as a runner.Runtime and its
// optional abilities (runner.Snapshotter, runner.Reaper, io.Closer). Each
// keeps its state in its own directory under --state-dir, so neither takes
// the other's sandboxes for orphans.
func newRuntime(cfg *config, logger *slog.Logger) (runner.Runtime, error) {
	if cfg.Runtime == "runc" {
		rt, err := runc.New(runc.Config{
			StateDir: filepath.Join(cfg.StateDir, "runc"),
			Agent:    cfg.Agent,
			Logger:   logger,
		})
		if err != nil {
			return nil, err // not a nil *runc.Runtime in a non-nil interface
		}
		return rt, nil
	}
	rt, err := runsc.New(runsc.Config{
		Runsc:       cfg.Runsc,
		StateDir:    cfg.StateDir,
		Agent:       cfg.Agent,
		Platform:    cfg.Platform,
		DebugLog:    cfg.RunscDebugLog,
		Gofer:       cfg.Gofer,
		Logger:      logger,
		SnapshotDir: cmp.Or(cfg.SnapshotDir, filepath.Join(cfg.CacheDir, "snapshots")),
	})
	if err != nil {
		return nil, err // not a nil *runsc.Runtime in a non-nil interface
	}
	return rt, nil
}

// Runtime notes, as /v1/templates shows them.
const (
	runscNote = "gVisor: each sandbox runs on a kernel of its own (gVisor's Sentry), between user code and the host's kernel."
	runcNote  = "runc: plain Linux containers (namespaces, cgroups, dropped capabilities) sharing the host's kernel, " +
		"with no second kernel in between: a kernel bug user code can reach is the host's. For trusted code only. " +
		"Snapshots are gVisor-only: sandboxes here are always booted."
)

// withRuntime says in t which runtime serves it.
func withRuntime(t core.Template, name string) core.Template {
	t.Runtime, t.RuntimeNote = name, runscNote
	if name == "runc" {
		t.RuntimeNote = runcNote
	}
	return t
}
