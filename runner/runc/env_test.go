package runc_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/internal/prereq"
	"github.com/paddock-dev/paddock/rootfs"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/contract"
	"github.com/paddock-dev/paddock/runner/runc"
	"github.com/paddock-dev/paddock/templates"
)

// realEnv is a runc runtime on a private state directory and the template
// specs to start. It skips when the environment is missing, except under
// `make test` (PADDOCK_REQUIRE_GVISOR=1), where a missing piece fails.
type realEnv struct {
	rt    *runc.Runtime
	cfg   runc.Config
	specs map[string]runner.Spec
}

func newRealEnv(t *testing.T) *realEnv {
	t.Helper()
	agent, cache := os.Getenv("PADDOCK_AGENT"), os.Getenv("PADDOCK_CACHE")
	if agent == "" || cache == "" {
		prereq.Missing(t, "PADDOCK_AGENT and PADDOCK_CACHE unset", "run via `make test`, which sets them")
	}
	prereq.Root(t, "to make containers")
	builder := &rootfs.Builder{CacheDir: cache}
	specs := map[string]runner.Spec{}
	for _, name := range []string{"python", "node"} {
		tmpl, err := templates.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		img, err := builder.Lookup(tmpl)
		if err != nil {
			t.Fatalf("rootfs of %s: %v (make rootfs builds it)", name, err)
		}
		specs[name] = runner.Spec{Template: name, Language: tmpl.Language, Rootfs: img.Path,
			Limits: runner.Limits{MemoryBytes: 256 << 20, Processes: 32, DiskBytes: 64 << 20},
			Labels: map[string]string{"instance": "test"}}
	}
	state, err := os.MkdirTemp("", "pdk-runc-")
	if err != nil {
		t.Fatal(err)
	}
	cfg := runc.Config{StateDir: state, Agent: agent,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	rt, err := runc.New(cfg)
	if errors.Is(err, runc.ErrNoBootstrap) {
		prereq.Missing(t, "a test binary built without cgo", "install gcc and libc6-dev (make cc does) and test with CGO_ENABLED=1")
	}
	if err != nil {
		t.Fatal(err)
	}
	e := &realEnv{rt: rt, cfg: cfg, specs: specs}
	t.Cleanup(func() {
		if ids := e.live(t); len(ids) > 0 {
			t.Errorf("sandboxes left behind: %v", ids)
		}
		_, _ = rt.Cleanup(context.Background())
		if err := os.RemoveAll(state); err != nil {
			t.Errorf("removing the state directory: %v", err)
		}
	})
	return e
}

// live lists the containers with state, a bundle (the root's mounts) or
// a cgroup left under the test's state directory.
func (e *realEnv) live(t testing.TB) []string {
	t.Helper()
	seen := map[string]bool{}
	for _, dir := range []string{"containers", "bundles"} {
		ents, err := os.ReadDir(filepath.Join(e.cfg.StateDir, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, en := range ents {
			if strings.HasPrefix(en.Name(), "pd-") {
				seen[en.Name()] = true
			}
		}
	}
	var ids []string
	for id := range seen {
		ids = append(ids, id)
	}
	return ids
}

func (e *realEnv) env() contract.Env {
	return contract.Env{
		Runtime:    e.rt,
		Specs:      e.specs,
		HostKernel: true,
		Live:       e.live,
		Cgroup:     func(id string) string { return "paddock-runc/" + id },
		Reopen: func(t testing.TB) contract.Cleaner {
			rt, err := runc.New(e.cfg)
			if err != nil {
				t.Fatal(err)
			}
			return rt
		},
	}
}

// TestRuncContract runs the runner contract on real runc containers.
func TestRuncContract(t *testing.T) {
	contract.Test(t, newRealEnv(t).env())
}
