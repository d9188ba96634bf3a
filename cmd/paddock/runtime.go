package main

import (
	"cmp"
	"log/slog"
	"path/filepath"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runsc"
)

// newRuntime makes the runtime the server's sandboxes run on: gVisor's.
// Above cmd, everything knows it only as a runner.Runtime and its optional
// abilities (runner.Snapshotter, runner.Reaper, io.Closer).
func newRuntime(cfg *config, logger *slog.Logger) (runner.Runtime, error) {
	rt, err := runsc.New(runsc.Config{
		Runsc:       cfg.Runsc,
		StateDir:    cfg.StateDir,
		Agent:       cfg.Agent,
		Platform:    cfg.Platform,
		Logger:      logger,
		SnapshotDir: cmp.Or(cfg.SnapshotDir, filepath.Join(cfg.CacheDir, "snapshots")),
	})
	if err != nil {
		return nil, err // not a nil *runsc.Runtime in a non-nil interface
	}
	return rt, nil
}
