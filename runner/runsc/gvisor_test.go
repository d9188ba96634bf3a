package runsc_test

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"slices"
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
func (e *realEnv) list(t *testing.T) []string {
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

func TestGVisorRuns(t *testing.T) {
	e := newRealEnv(t)
	tests := []struct {
		name       string
		lang       string
		req        runner.RunRequest
		wantOut    string
		wantErrSub string
		wantCode   int
		wantReason runner.Reason
	}{
		{name: "python hello", lang: "python", req: runner.RunRequest{Code: "print(6*7)"},
			wantOut: "42\n", wantReason: runner.ReasonOK},
		{name: "node hello", lang: "node", req: runner.RunRequest{Code: "console.log(6*7)"},
			wantOut: "42\n", wantReason: runner.ReasonOK},
		{name: "python stderr and exit code", lang: "python",
			req:        runner.RunRequest{Code: "import sys\nsys.stderr.write('bad\\n')\nsys.exit(3)"},
			wantErrSub: "bad\n", wantCode: 3, wantReason: runner.ReasonError},
		{name: "python exception", lang: "python", req: runner.RunRequest{Code: "1/0"},
			wantErrSub: "ZeroDivisionError: division by zero", wantCode: 1, wantReason: runner.ReasonError},
		{name: "node exception", lang: "node", req: runner.RunRequest{Code: "throw new TypeError('nope')"},
			wantErrSub: "TypeError: nope", wantCode: 1, wantReason: runner.ReasonError},
		{name: "stdin delivered", lang: "python", req: runner.RunRequest{Code: "print(input()[::-1])", Stdin: []byte("olleh\n")},
			wantOut: "hello\n", wantReason: runner.ReasonOK},
		{name: "no stdin is EOF", lang: "python", req: runner.RunRequest{Code: "input()"},
			wantErrSub: "EOFError", wantCode: 1, wantReason: runner.ReasonError},
		{name: "files args env", lang: "python", req: runner.RunRequest{
			Code:  "import sys, os\nprint(open('data/in.txt').read(), sys.argv[1:], os.environ['GREETING'])",
			Files: []runner.File{{Path: "data/in.txt", Content: []byte("file-content")}},
			Args:  []string{"a", "b"}, Env: map[string]string{"GREETING": "hi"}},
			wantOut: "file-content ['a', 'b'] hi\n", wantReason: runner.ReasonOK},
		{name: "runs as non-root", lang: "python", req: runner.RunRequest{Code: "import os; print(os.getuid(), os.getcwd())"},
			wantOut: "1000 /workspace\n", wantReason: runner.ReasonOK},
		{name: "no network", lang: "python", req: runner.RunRequest{
			Code: "import socket\ntry:\n socket.create_connection(('10.0.0.1', 80), 2)\nexcept OSError as e: print(type(e).__name__)"},
			wantOut: "OSError\n", wantReason: runner.ReasonOK},
		{name: "runtime is not writable", lang: "python", req: runner.RunRequest{
			Code: "import os\ntry:\n open(os.path.dirname(os.__file__)+'/json/__init__.py','a')\nexcept OSError as e: print(type(e).__name__)"},
			wantOut: "PermissionError\n", wantReason: runner.ReasonOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := e.run(t, tt.lang, tt.req)
			if tt.wantOut != "" && string(res.Stdout) != tt.wantOut {
				t.Errorf("stdout = %q, want %q (stderr %q)", res.Stdout, tt.wantOut, res.Stderr)
			}
			if !strings.Contains(string(res.Stderr), tt.wantErrSub) {
				t.Errorf("stderr = %q, want it to contain %q", res.Stderr, tt.wantErrSub)
			}
			if res.ExitCode != tt.wantCode || res.Reason != tt.wantReason {
				t.Errorf("exit = %d %s, want %d %s (stderr %q)", res.ExitCode, res.Reason, tt.wantCode, tt.wantReason, res.Stderr)
			}
		})
	}
}

func TestGVisorLimits(t *testing.T) {
	e := newRealEnv(t)
	t.Run("busy loop times out and dies", func(t *testing.T) {
		res, el := e.runTimed(t, "python", runner.RunRequest{Code: "while True: pass", Timeout: 2 * time.Second})
		if res.Reason != runner.ReasonTimeout {
			t.Fatalf("reason = %s, want timeout", res.Reason)
		}
		// Not before the timeout. The upper bound is a safety net only:
		// the host's own deadline is the timeout plus 2 s of grace, so a
		// run far past it was not stopped by either.
		if el < 2*time.Second || el > 30*time.Second {
			t.Errorf("the run took %v, want 2 s, its timeout (up to 4 s with the host's grace)", el)
		}
	})
	t.Run("sleep times out", func(t *testing.T) {
		res := e.run(t, "python", runner.RunRequest{Code: "import time; time.sleep(3600)", Timeout: time.Second})
		if res.Reason != runner.ReasonTimeout {
			t.Fatalf("reason = %s, want timeout", res.Reason)
		}
	})
	t.Run("output flood is capped", func(t *testing.T) {
		res := e.run(t, "python", runner.RunRequest{Code: "print('A'*10**8)", MaxStdout: 1 << 20, MaxStderr: 1 << 20})
		if res.Reason != runner.ReasonOutputLimit || !res.StdoutTruncated || len(res.Stdout) != 1<<20 {
			t.Fatalf("reason %s truncated %v len %d; want output_limit, true, %d", res.Reason, res.StdoutTruncated, len(res.Stdout), 1<<20)
		}
	})
	t.Run("memory hog is oom", func(t *testing.T) {
		res := e.run(t, "python", runner.RunRequest{Code: "a = []\nwhile True: a.append(bytearray(16 << 20))"})
		if res.Reason != runner.ReasonOOM {
			t.Fatalf("reason = %s, want oom (stderr %q)", res.Reason, res.Stderr)
		}
	})
	t.Run("fork bomb is contained", func(t *testing.T) {
		res := e.run(t, "python", runner.RunRequest{
			Code:    "import os\nn = 0\ntry:\n while True:\n  if os.fork() == 0:\n   import time; time.sleep(60)\n  n += 1\nexcept OSError as e:\n print('stopped', type(e).__name__)",
			Timeout: 20 * time.Second})
		if !strings.Contains(string(res.Stdout), "stopped BlockingIOError") {
			t.Fatalf("stdout %q stderr %q reason %s, want the fork loop stopped with EAGAIN", res.Stdout, res.Stderr, res.Reason)
		}
	})
	t.Run("uncaught fork bomb says pids_limit", func(t *testing.T) {
		// Every process of this bomb dies of its first failed fork, so by
		// the time the program ends the agent counts well under the limit
		// (0 to 11 of 32 observed). The driver's hint that a refused fork
		// is ending the program makes the agent read the limit at once,
		// while the processes still fill it. Each fork costs host memory
		// (gVisor copies 2 MiB at a time on write), and at 256 MiB the
		// sandbox sometimes ran out of memory first: this run gets 1 GiB.
		spec := e.specs["python"]
		spec.Limits.MemoryBytes = 1 << 30
		sb, err := e.rt.Start(t.Context(), spec)
		if err != nil {
			t.Fatal(err)
		}
		defer sb.Destroy(context.Background())
		res, err := sb.Run(t.Context(), runner.RunRequest{Code: "import os\nwhile True: os.fork()", Timeout: 20 * time.Second,
			MaxStdout: 1 << 20, MaxStderr: 1 << 20}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Reason != runner.ReasonPidsLimit || res.ExitCode != 1 || !strings.Contains(string(res.Stderr), "BlockingIOError") ||
			!slices.Equal(res.LimitsReached, []string{"processes"}) {
			t.Fatalf("reason %s exit %d limits reached %q stderr %.300q, want pids_limit, 1, [processes] and EAGAIN",
				res.Reason, res.ExitCode, res.LimitsReached, res.Stderr)
		}
	})
	// At the ceiling when the clock runs out, the program did not fail of
	// the limit: the reason stays timeout, with the ceiling reported.
	t.Run("fork bomb that runs out the clock says timeout, processes reached", func(t *testing.T) {
		// The timeout must come after the 64 forks (about a second here);
		// 20 s leaves a busy machine room for them.
		res := e.run(t, "python", runner.RunRequest{
			Code:    "import os, time\nfor _ in range(64):\n try:\n  if os.fork() == 0:\n   time.sleep(60)\n except OSError:\n  pass\ntime.sleep(60)",
			Timeout: 20 * time.Second})
		if res.Reason != runner.ReasonTimeout || !slices.Equal(res.LimitsReached, []string{"processes"}) {
			t.Fatalf("reason %s exit %d limits reached %q stderr %.300q, want timeout with [processes]", res.Reason, res.ExitCode, res.LimitsReached, res.Stderr)
		}
	})
	for _, dir := range []string{"/workspace", "/tmp"} {
		t.Run("filling "+dir+" says disk_limit", func(t *testing.T) {
			res := e.run(t, "python", runner.RunRequest{
				Code:    "f = open('" + dir + "/big', 'wb')\nwhile True: f.write(b'x' * 2**20)",
				Timeout: 20 * time.Second})
			if res.Reason != runner.ReasonDiskLimit || res.ExitCode != 1 || !strings.Contains(string(res.Stderr), "No space left on device") ||
				!slices.Equal(res.LimitsReached, []string{"disk"}) {
				t.Fatalf("reason %s exit %d limits reached %q stderr %.300q, want disk_limit, 1, [disk] and ENOSPC",
					res.Reason, res.ExitCode, res.LimitsReached, res.Stderr)
			}
		})
	}
	t.Run("failing with room to spare says error", func(t *testing.T) {
		res := e.run(t, "python", runner.RunRequest{
			Code: "import os\nfor _ in range(8):\n if os.fork() == 0:\n  import time; time.sleep(60)\nopen('/workspace/small', 'wb').write(b'x' * 2**20)\nraise SystemExit(3)"})
		if res.Reason != runner.ReasonError || res.ExitCode != 3 {
			t.Fatalf("reason %s exit %d stderr %.300q, want error 3", res.Reason, res.ExitCode, res.Stderr)
		}
	})
	t.Run("grandchild holding stdout does not delay", func(t *testing.T) {
		// Held open by the grandchild, the run would end at its timeout,
		// timed out, not ok; the timeout is long so that only this can.
		res, el := e.runTimed(t, "python", runner.RunRequest{Code: "import subprocess; subprocess.Popen(['sleep','600']); print('done')",
			Timeout: time.Minute})
		if res.Reason != runner.ReasonOK || string(res.Stdout) != "done\n" {
			t.Fatalf("got %s %q after %v, want ok done", res.Reason, res.Stdout, el)
		}
	})
}

func TestGVisorDestroyRemovesSandbox(t *testing.T) {
	e := newRealEnv(t)
	sb, err := e.rt.Start(t.Context(), e.specs["python"])
	if err != nil {
		t.Fatal(err)
	}
	if ids := e.list(t); len(ids) != 1 || ids[0] != sb.ID() {
		t.Fatalf("runsc list = %v, want [%s]", ids, sb.ID())
	}
	if err := sb.Destroy(t.Context()); err != nil {
		t.Fatal(err)
	}
	if ids := e.list(t); len(ids) != 0 {
		t.Fatalf("runsc list after destroy = %v, want empty", ids)
	}
	if _, err := sb.Run(t.Context(), runner.RunRequest{Code: "print(1)", Timeout: time.Second}, nil); err == nil {
		t.Fatal("run on a destroyed sandbox succeeded")
	}
}
