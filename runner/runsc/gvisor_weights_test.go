package runsc_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/ocispec"
	"github.com/paddock-dev/paddock/runner/runsc"
)

// TestGVisorCPUWeights reads back, from the host's cgroup files and
// /proc, the CPU treatment of each kind of sandbox: a background start
// or restore (a pool's refill) runs at cpu.shares 2 while runsc brings it
// up, read as each `runsc run` or `runsc restore` returns and before the
// runtime has the agent's answer, and is handed back at 1024; a start or
// restore someone waits for (a pool miss) has 1024 throughout; a
// sandbox whose kernel opens (a session) has 16384. Every thread of
// every sandbox process is SCHED_OTHER at nice 10 (the Sentry puts a few
// of its own at 11), in its sandbox's cpu cgroup, so that the cgroups'
// weights are what orders them.
func TestGVisorCPUWeights(t *testing.T) {
	e := newRealEnv(t)
	rt := snapshotRuntime(t, e, t.TempDir())
	var mu sync.Mutex
	upAt := map[string]string{} // sandbox ID → cpu.shares as runsc returned
	rt.Runsc().Observe = func(inv runsc.Invocation) {
		sub, id := subcommand(inv.Argv), inv.Argv[len(inv.Argv)-1]
		if sub != "run" && sub != "restore" {
			return
		}
		shares := readCPU(t, id, "cpu.shares")
		mu.Lock()
		upAt[id] = shares
		mu.Unlock()
	}
	spec := e.specs["python"]
	img, err := rt.Snapshot(t.Context(), spec)
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	background := func(s runner.Spec) runner.Spec { s.Background = true; return s }
	bgImg := img
	bgImg.Spec = background(img.Spec)
	for _, tc := range []struct {
		name         string
		up           func() (runner.Sandbox, error)
		kernel       bool
		upAt, handed string
	}{
		{name: "refill, restored", up: func() (runner.Sandbox, error) { return rt.Restore(t.Context(), bgImg) }, upAt: "2", handed: "1024"},
		{name: "refill, cold-started", up: func() (runner.Sandbox, error) { return rt.Start(t.Context(), background(spec)) }, upAt: "2", handed: "1024"},
		{name: "miss, restored", up: func() (runner.Sandbox, error) { return rt.Restore(t.Context(), img) }, upAt: "1024", handed: "1024"},
		{name: "miss, cold-started", up: func() (runner.Sandbox, error) { return rt.Start(t.Context(), spec) }, upAt: "1024", handed: "1024"},
		{name: "session kernel, restored by a refill", up: func() (runner.Sandbox, error) { return rt.Restore(t.Context(), bgImg) }, kernel: true, upAt: "2", handed: "16384"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb, err := tc.up()
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := sb.Destroy(context.WithoutCancel(t.Context())); err != nil {
					t.Errorf("destroy: %v", err)
				}
			}()
			if tc.kernel {
				k, err := sb.(runner.KernelOpener).OpenKernel(t.Context(), runner.KernelOptions{})
				if err != nil {
					t.Fatalf("opening a kernel: %v", err)
				}
				res, err := k.Execute(t.Context(), runner.ExecuteRequest{Code: "1 + 1"}, nil)
				if err != nil || res.Status != "ok" {
					t.Fatalf("cell: %+v, %v", res, err)
				}
			}
			mu.Lock()
			at := upAt[sb.ID()]
			mu.Unlock()
			if at != tc.upAt {
				t.Errorf("cpu.shares as runsc brought it up = %q, want %q", at, tc.upAt)
			}
			if got := readCPU(t, sb.ID(), "cpu.shares"); got != tc.handed {
				t.Errorf("cpu.shares once up = %q, want %q", got, tc.handed)
			}
			checkThreads(t, rt, sb.ID())
		})
	}
}

// subcommand is the runsc subcommand of argv: its first word that is no flag.
func subcommand(argv []string) string {
	for _, a := range argv {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// readCPU reads a file of sandbox id's cgroup in the cpu hierarchy.
func readCPU(t *testing.T, id, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ocispec.CgroupRoot, "cpu", ocispec.CgroupsPath(id), name))
	if err != nil {
		t.Errorf("reading %s of %s: %v", name, id, err)
		return ""
	}
	return strings.TrimSpace(string(b))
}

// checkThreads checks every thread of sandbox id's processes (those in
// its cpu cgroup): SCHED_OTHER at nice 10 or 11 (the Sentry lowers a
// few of its threads by one).
func checkThreads(t *testing.T, rt *runsc.Runtime, id string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ocispec.CgroupRoot, "cpu", ocispec.CgroupsPath(id), "tasks"))
	if err != nil {
		t.Fatal(err)
	}
	tids := strings.Fields(string(b))
	if len(tids) == 0 {
		t.Fatalf("no threads in the cpu cgroup of %s", id)
	}
	for _, tid := range tids {
		stat, err := os.ReadFile("/proc/" + tid + "/stat")
		if err != nil {
			continue // the thread has ended since
		}
		// The fields after the command's name, which ends in ')', start
		// at field 3: 19 is the nice value, 41 the scheduling policy.
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		nice, policy := f[19-3], f[41-3]
		if (nice != "10" && nice != "11") || policy != "0" {
			comm, _ := os.ReadFile("/proc/" + tid + "/comm")
			t.Errorf("thread %s (%s) of %s: nice %s, policy %s; want nice 10 or 11, policy 0 (SCHED_OTHER)", tid, strings.TrimSpace(string(comm)), id, nice, policy)
		}
	}
}
