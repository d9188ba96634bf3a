package contract

import (
	"context"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner"
)

// Env is one runtime under test.
type Env struct {
	// Runtime starts the sandboxes.
	Runtime runner.Runtime
	// Specs are the templates to start, by language: "python" and "node",
	// with at most 256 MiB of memory, 32 processes and 64 MiB of disk.
	Specs map[string]runner.Spec
	// Live lists the sandboxes the runtime still has on the host.
	Live func(t testing.TB) []string
	// HostKernel says the sandboxes share the host's kernel (runc): the
	// few cases whose outcome differs there say how.
	HostKernel bool
	// Cgroup is the path of sandbox id's cgroup under each v1 hierarchy.
	Cgroup func(id string) string
	// Reopen makes a second runtime on the same state, as a server
	// restarted after a crash would, for its Cleanup.
	Reopen func(t testing.TB) Cleaner
}

// Cleaner is a runtime's cleanup of what an earlier process left behind.
type Cleaner interface {
	Cleanup(ctx context.Context) (int, error)
}

// Test runs every case of the contract on e.
func Test(t *testing.T, e Env) {
	t.Run("runs", func(t *testing.T) { testRuns(t, e) })
	t.Run("limits", func(t *testing.T) { testLimits(t, e) })
	t.Run("kernels", func(t *testing.T) { testKernels(t, e) })
	t.Run("kernel CPU weight and burst", func(t *testing.T) { testCPU(t, e) })
	t.Run("files", func(t *testing.T) { testFiles(t, e) })
	t.Run("destroy", func(t *testing.T) { testDestroy(t, e) })
	t.Run("cleanup after crash", func(t *testing.T) { testCrash(t, e) })
}

// start starts a sandbox of lang's spec, changed by edit when set, and
// destroys it when the test ends.
func start(t *testing.T, e Env, lang string, edit func(*runner.Spec)) runner.Sandbox {
	t.Helper()
	spec := e.Specs[lang]
	if edit != nil {
		edit(&spec)
	}
	sb, err := e.Runtime.Start(t.Context(), spec)
	if err != nil {
		t.Fatalf("starting a %s sandbox: %v", lang, err)
	}
	t.Cleanup(func() {
		if err := sb.Destroy(context.Background()); err != nil {
			t.Errorf("destroying %s: %v", sb.ID(), err)
		}
	})
	return sb
}

// run runs req once in a fresh sandbox and returns the result and how
// long the run itself took.
func run(t *testing.T, e Env, lang string, edit func(*runner.Spec), req runner.RunRequest) (runner.RunResult, time.Duration) {
	t.Helper()
	sb := start(t, e, lang, edit)
	if req.Timeout == 0 {
		req.Timeout = 10 * time.Second
	}
	if req.MaxStdout == 0 {
		req.MaxStdout, req.MaxStderr = 1<<20, 1<<20
	}
	begin := time.Now()
	res, err := sb.Run(t.Context(), req, nil)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return res, time.Since(begin)
}
