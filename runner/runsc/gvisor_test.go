package runsc_test

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/rootfs"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runsc"
	"github.com/paddock-dev/paddock/templates"
)

// realEnv is a runtime on real gVisor and the template specs to start. It
// skips when the environment is missing, except under `make test`
// (PADDOCK_REQUIRE_GVISOR=1), where a missing piece fails the test.
type realEnv struct {
	rt    *runsc.Runtime
	runsc string
	state string
	specs map[string]runner.Spec
}

func newRealEnv(t *testing.T) *realEnv {
	t.Helper()
	runscPath, agent, cache := os.Getenv("PADDOCK_RUNSC"), os.Getenv("PADDOCK_AGENT"), os.Getenv("PADDOCK_CACHE")
	if runscPath == "" || agent == "" || cache == "" {
		if os.Getenv("PADDOCK_REQUIRE_GVISOR") == "1" {
			t.Fatal("PADDOCK_RUNSC, PADDOCK_AGENT and PADDOCK_CACHE must be set (make test sets them)")
		}
		t.Skip("real gVisor not configured: run via `make test`")
	}
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
			Limits: runner.Limits{MemoryBytes: 256 << 20, Processes: 32, DiskBytes: 64 << 20}}
	}
	state, err := os.MkdirTemp("", "pdk-")
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runsc.New(runsc.Config{Runsc: runscPath, StateDir: state, Agent: agent,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	e := &realEnv{rt: rt, runsc: runscPath, state: state, specs: specs}
	t.Cleanup(func() {
		if ids := e.list(t); len(ids) > 0 {
			t.Errorf("sandboxes left behind: %v", ids)
		}
		_, _ = rt.Cleanup(context.Background())
		if err := rt.Close(); err != nil {
			t.Errorf("closing the runtime: %v", err)
		}
		if err := os.RemoveAll(state); err != nil {
			t.Errorf("removing the state directory: %v", err)
		}
	})
	return e
}

// list returns the container IDs runsc still knows under the test's root.
func (e *realEnv) list(t testing.TB) []string {
	t.Helper()
	out, err := exec.Command(e.runsc, "--root="+e.state+"/runsc", "list", "--quiet").Output()
	if err != nil {
		t.Fatalf("runsc list: %v", err)
	}
	return strings.Fields(string(out))
}

// run starts a sandbox, runs req in it and destroys it.
func (e *realEnv) run(t *testing.T, lang string, req runner.RunRequest) runner.RunResult {
	t.Helper()
	res, _ := e.runTimed(t, lang, req)
	return res
}

// runTimed is run that also returns how long the run itself took, the
// sandbox's start and destruction left out.
func (e *realEnv) runTimed(t *testing.T, lang string, req runner.RunRequest) (runner.RunResult, time.Duration) {
	t.Helper()
	sb, err := e.rt.Start(t.Context(), e.specs[lang])
	if err != nil {
		t.Fatalf("start %s: %v", lang, err)
	}
	defer func() {
		if err := sb.Destroy(context.Background()); err != nil {
			t.Errorf("destroy: %v", err)
		}
	}()
	if req.Timeout == 0 {
		req.Timeout = 10 * time.Second
	}
	if req.MaxStdout == 0 {
		req.MaxStdout, req.MaxStderr = 1<<20, 1<<20
	}
	start := time.Now()
	res, err := sb.Run(t.Context(), req, nil)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return res, took
}
