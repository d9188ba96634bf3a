package runsc_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner"
)

// growHeap fills V8's heap with arrays of doubles, which runs into the
// ceiling within seconds (2 to 6 s observed at 256 and 512 MiB).
const growHeap = "const a = []; for (;;) a.push(new Array(1e5).fill(1.5))"

// forgedHeapOOM prints what node prints when its heap is full, then
// aborts as node does, with only a few MiB of heap in use.
const forgedHeapOOM = "process.stderr.write('FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\\n'); process.abort()"

// /dev/shm is a tmpfs of the run's disk size, like /tmp: past it a write
// fails with ENOSPC, within it POSIX shared memory still works.
func TestGVisorDevShmUnderDiskLimit(t *testing.T) {
	e := newRealEnv(t)
	spec := e.specs["python"]
	spec.Limits.DiskBytes = 16 << 20
	e.specs["python-16m"] = spec
	code := "import errno, multiprocessing, os\n" +
		"st = os.statvfs('/dev/shm')\nprint('size', st.f_blocks * st.f_frsize >> 20)\n" +
		"with open('/dev/shm/small', 'wb') as f:\n    f.write(b'x' * (1 << 20))\nprint('1 MiB written')\nos.remove('/dev/shm/small')\n" +
		"lock = multiprocessing.Lock()\nwith lock:\n    print('semaphore works')\n" +
		"try:\n    with open('/dev/shm/big', 'wb') as f:\n        for _ in range(60):\n            f.write(b'x' * (1 << 20))\n    print('60 MiB written')\n" +
		"except OSError as e:\n    print('refused', e.errno == errno.ENOSPC, 15 << 20 <= os.path.getsize('/dev/shm/big') <= 16 << 20)\n"
	res := e.run(t, "python-16m", runner.RunRequest{Code: code, Timeout: 30 * time.Second})
	want := "size 16\n1 MiB written\nsemaphore works\nrefused True True\n"
	if string(res.Stdout) != want || res.Reason != runner.ReasonOK {
		t.Fatalf("stdout %q reason %s stderr %.300q; want %q, ok", res.Stdout, res.Reason, res.Stderr, want)
	}
}

// Node's heap is sized below the sandbox's memory: a program that fills
// it dies of V8's own out-of-memory error and the agent, having seen the
// interpreter abort with that much memory, says oom. An abort with a small
// heap, whatever it prints, stays killed; memory outside the heap is
// still stopped by the cgroup.
func TestGVisorNodeHeapCeiling(t *testing.T) {
	e := newRealEnv(t)
	tests := []struct {
		name      string
		code      string
		reason    runner.Reason
		exitCode  int
		stderrHas string
	}{
		{name: "heap exhausted", code: growHeap, reason: runner.ReasonOOM, exitCode: 134, stderrHas: "JavaScript heap out of memory"},
		{name: "small objects exhaust the heap", code: "const a = []; for (;;) a.push({x: Math.random()})",
			reason: runner.ReasonOOM, exitCode: 134, stderrHas: "JavaScript heap out of memory"},
		{name: "process.abort", code: "process.abort()", reason: runner.ReasonKilled, exitCode: 134},
		{name: "forged heap message", code: forgedHeapOOM, reason: runner.ReasonKilled, exitCode: 134, stderrHas: "JavaScript heap out of memory"},
		// H17: Buffers live outside V8's heap, so the cgroup stops them.
		{name: "off-heap Buffers", code: "const a = []; for (;;) a.push(Buffer.alloc(1 << 24, 1))", reason: runner.ReasonOOM, exitCode: 137},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The small objects take 10 to 40 s to fill 134 MiB of heap on a
			// busy 2-core host (V8 collects more and more often as the heap
			// fills); the timeout is a safety net, not the thing measured.
			res := e.run(t, "node", runner.RunRequest{Code: tt.code, Timeout: 2 * time.Minute})
			if res.Reason != tt.reason || res.ExitCode != tt.exitCode || !strings.Contains(string(res.Stderr), tt.stderrHas) {
				t.Fatalf("reason %s exit %d stderr %.300q; want %s, %d, stderr with %q", res.Reason, res.ExitCode, res.Stderr, tt.reason, tt.exitCode, tt.stderrHas)
			}
		})
	}
}

// A session's Node kernel that fills its heap ends the cell with oom; one
// that aborts with a small heap is lost, whatever it printed.
func TestGVisorNodeKernelHeapCeiling(t *testing.T) {
	e := newRealEnv(t)
	tests := []struct {
		name   string
		code   string
		reason runner.Reason
	}{
		{name: "heap exhausted", code: growHeap, reason: runner.ReasonOOM},
		{name: "forged heap message", code: forgedHeapOOM, reason: runner.ReasonKernelLost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sb, err := e.rt.Start(t.Context(), e.specs["node"])
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := sb.Destroy(context.Background()); err != nil {
					t.Errorf("destroy: %v", err)
				}
			}()
			k, err := sb.(runner.KernelOpener).OpenKernel(t.Context(), runner.KernelOptions{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := k.Execute(t.Context(), runner.ExecuteRequest{Code: "let kept = 41", Timeout: 30 * time.Second, MaxOutput: 1 << 20}, nil)
			if err != nil || res.Reason != runner.ReasonOK {
				t.Fatalf("first cell: %+v, %v", res, err)
			}
			var stderr strings.Builder
			res, err = k.Execute(t.Context(), runner.ExecuteRequest{Code: tt.code, Timeout: 2 * time.Minute, MaxOutput: 1 << 20}, func(ev runner.Event) {
				if ev.Type == runner.EventStream && ev.Stream == runner.Stderr {
					stderr.WriteString(ev.Text)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != runner.StatusAborted || res.Reason != tt.reason {
				t.Fatalf("cell ended %s %s (stderr %.300q), want aborted %s", res.Status, res.Reason, stderr.String(), tt.reason)
			}
			select {
			case <-k.Lost():
			case <-time.After(30 * time.Second): // a safety net: the agent reports the loss right after the cell's end
				t.Fatal("the kernel was not reported lost")
			}
		})
	}
}
