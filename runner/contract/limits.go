package contract

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner"
)

func testLimits(t *testing.T, e Env) {
	t.Run("busy loop times out and dies", func(t *testing.T) {
		res, el := run(t, e, "python", nil, runner.RunRequest{Code: "while True: pass", Timeout: 2 * time.Second})
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
		res, _ := run(t, e, "python", nil, runner.RunRequest{Code: "import time; time.sleep(3600)", Timeout: time.Second})
		if res.Reason != runner.ReasonTimeout {
			t.Fatalf("reason = %s, want timeout", res.Reason)
		}
	})
	t.Run("output flood is capped", func(t *testing.T) {
		res, _ := run(t, e, "python", nil, runner.RunRequest{Code: "print('A'*10**8)", MaxStdout: 1 << 20, MaxStderr: 1 << 20})
		if res.Reason != runner.ReasonOutputLimit || !res.StdoutTruncated || len(res.Stdout) != 1<<20 {
			t.Fatalf("reason %s truncated %v len %d; want output_limit, true, %d", res.Reason, res.StdoutTruncated, len(res.Stdout), 1<<20)
		}
	})
	t.Run("python memory hog is oom", func(t *testing.T) {
		res, _ := run(t, e, "python", nil, runner.RunRequest{Code: "a = []\nwhile True: a.append(bytearray(16 << 20))"})
		if res.Reason != runner.ReasonOOM {
			t.Fatalf("reason = %s, want oom (stderr %q)", res.Reason, res.Stderr)
		}
	})
	t.Run("node off-heap memory hog is oom", func(t *testing.T) {
		res, _ := run(t, e, "node", nil, runner.RunRequest{Code: "const a=[];for(;;)a.push(Buffer.alloc(1<<24,1))"})
		if res.Reason != runner.ReasonOOM {
			t.Fatalf("reason = %s, want oom (stderr %.300q)", res.Reason, res.Stderr)
		}
	})
	t.Run("fork bomb is contained", func(t *testing.T) {
		res, _ := run(t, e, "python", nil, runner.RunRequest{
			Code:    "import os\nn = 0\ntry:\n while True:\n  if os.fork() == 0:\n   import time; time.sleep(60)\n  n += 1\nexcept OSError as e:\n print('stopped', type(e).__name__)",
			Timeout: 20 * time.Second})
		if !strings.Contains(string(res.Stdout), "stopped BlockingIOError") {
			t.Fatalf("stdout %q stderr %q reason %s, want the fork loop stopped with EAGAIN", res.Stdout, res.Stderr, res.Reason)
		}
	})
	t.Run("uncaught fork bomb says pids_limit", func(t *testing.T) {
		// Each fork costs memory (gVisor copies 2 MiB at a time on
		// write); this run gets 1 GiB so that memory is not what ends it.
		res, _ := run(t, e, "python", func(s *runner.Spec) { s.Limits.MemoryBytes = 1 << 30 },
			runner.RunRequest{Code: "import os\nwhile True: os.fork()", Timeout: 20 * time.Second})
		if e.HostKernel && res.Reason == runner.ReasonError && res.LimitsReached == nil {
			// On the host's kernel a fork is cheap and the tree of
			// processes, each dying of its first refused fork, can be
			// gone before the agent reads the limit at the first hint;
			// the refusal then reads error. It must still be the limit's.
			if res.ExitCode != 1 || !strings.Contains(string(res.Stderr), "BlockingIOError") {
				t.Fatalf("exit %d stderr %.300q, want 1 and EAGAIN", res.ExitCode, res.Stderr)
			}
			return
		}
		if res.Reason != runner.ReasonPidsLimit || res.ExitCode != 1 || !strings.Contains(string(res.Stderr), "BlockingIOError") ||
			!slices.Equal(res.LimitsReached, []string{"processes"}) {
			t.Fatalf("reason %s exit %d limits reached %q stderr %.300q, want pids_limit, 1, [processes] and EAGAIN",
				res.Reason, res.ExitCode, res.LimitsReached, res.Stderr)
		}
	})
	t.Run("fork bomb that runs out the clock says timeout, processes reached", func(t *testing.T) {
		res, _ := run(t, e, "python", nil, runner.RunRequest{
			Code:    "import os, time\nfor _ in range(64):\n try:\n  if os.fork() == 0:\n   time.sleep(60)\n except OSError:\n  pass\ntime.sleep(60)",
			Timeout: 20 * time.Second})
		if res.Reason != runner.ReasonTimeout || !slices.Equal(res.LimitsReached, []string{"processes"}) {
			t.Fatalf("reason %s exit %d limits reached %q stderr %.300q, want timeout with [processes]", res.Reason, res.ExitCode, res.LimitsReached, res.Stderr)
		}
	})
	for _, dir := range []string{"/workspace", "/tmp", "/dev/shm"} {
		t.Run("filling "+dir+" says disk_limit", func(t *testing.T) {
			res, _ := run(t, e, "python", nil, runner.RunRequest{
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
		res, _ := run(t, e, "python", nil, runner.RunRequest{
			Code: "import os\nfor _ in range(8):\n if os.fork() == 0:\n  import time; time.sleep(60)\nopen('/workspace/small', 'wb').write(b'x' * 2**20)\nraise SystemExit(3)"})
		if res.Reason != runner.ReasonError || res.ExitCode != 3 {
			t.Fatalf("reason %s exit %d stderr %.300q, want error 3", res.Reason, res.ExitCode, res.Stderr)
		}
	})
	t.Run("open files are capped", func(t *testing.T) {
		res, _ := run(t, e, "python", func(s *runner.Spec) { s.Limits.OpenFiles = 100 }, runner.RunRequest{
			Code: "import resource; print(resource.getrlimit(resource.RLIMIT_NOFILE))"})
		if string(res.Stdout) != "(100, 100)\n" {
			t.Fatalf("stdout %q stderr %.300q, want (100, 100)", res.Stdout, res.Stderr)
		}
	})
	t.Run("grandchild holding stdout does not delay", func(t *testing.T) {
		// Held open by the grandchild, the run would end at its timeout,
		// timed out, not ok; the timeout is long so that only this can.
		res, el := run(t, e, "python", nil, runner.RunRequest{Code: "import subprocess; subprocess.Popen(['sleep','600']); print('done')",
			Timeout: time.Minute})
		if res.Reason != runner.ReasonOK || string(res.Stdout) != "done\n" {
			t.Fatalf("got %s %q after %v, want ok done", res.Reason, res.Stdout, el)
		}
	})
}
