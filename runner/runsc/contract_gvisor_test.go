package runsc_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/paddock-dev/paddock/runner/contract"
	"github.com/paddock-dev/paddock/runner/ocispec"
	"github.com/paddock-dev/paddock/runner/runsc"
)

// TestGVisorContract runs the runner contract on real gVisor sandboxes:
// the same cases runner/runc passes on runc containers.
func TestGVisorContract(t *testing.T) {
	e := newRealEnv(t)
	contract.Test(t, contract.Env{
		Runtime: e.rt,
		Specs:   e.specs,
		Live:    func(t testing.TB) []string { return e.list(t) },
		Cgroup:  ocispec.CgroupsPath,
		Reopen: func(t testing.TB) contract.Cleaner {
			rt, err := runsc.New(runsc.Config{Runsc: e.runsc, StateDir: e.state, Agent: filepath.Clean(os.Getenv("PADDOCK_AGENT")),
				Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
			if err != nil {
				t.Fatal(err)
			}
			return rt
		},
	})
}
