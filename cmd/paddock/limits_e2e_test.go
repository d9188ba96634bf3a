package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// limitedRun is the part of a run response these tests look at.
type limitedRun struct {
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	ExitCode  int    `json:"exit_code"`
	Reason    string `json:"reason"`
	Start     string `json:"start"`
	SandboxID string `json:"sandbox_id"`
	Code      string `json:"code"`
	Message   string `json:"message"`
}

func (e *e2e) runLimited(t *testing.T, body map[string]any) (int, limitedRun) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, raw := e.postRaw(t, b)
	var r limitedRun
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("HTTP %d: decoding %s: %v", resp.StatusCode, raw, err)
	}
	return resp.StatusCode, r
}

// Programs that pass a limit asked for in the request, against real
// gVisor: each is stopped by that limit, with its reason, while the same
// program within the template's limits runs through. Overridden runs
// cold-start a sandbox of their own (without the warm-up); the others take
// the pool.
func TestE2ERunLimits(t *testing.T) {
	e := newE2E(t)
	const (
		alloc200MB = "b = b'\\x01' * (200 << 20)\nprint(len(b))"
		write64MB  = "f = open('/workspace/big', 'wb')\nfor _ in range(64):\n    f.write(b'x' * (1 << 20))\nf.close()\nprint('wrote')"
		// Children stay alive, so the task count is at the limit when the
		// failing fork raises BlockingIOError and the program exits 1.
		forkUntilRefused = "import os, time\nn = 1\ntry:\n    for _ in range(200):\n" +
			"        if os.fork() == 0:\n            time.sleep(60)\n            os._exit(0)\n        n += 1\n" +
			"except BlockingIOError:\n    print(n, flush=True)\n    raise\nprint('forked', n)"
		openUntilRefused = "fs = []\ntry:\n    while True:\n        fs.append(open('/dev/null'))\nexcept OSError as e:\n    print(len(fs) < 64, len(fs) > 40, e.errno)"
		// The share of a core the program got while spinning for 2 s.
		cpuShare = "import time\nw, c = time.monotonic(), time.process_time()\nwhile time.monotonic() - w < 2:\n    pass\n" +
			"print(round((time.process_time() - c) / (time.monotonic() - w), 2))"
	)
	tests := []struct {
		name      string
		lang      string
		code      string
		limits    map[string]any // nil: the template's
		reason    string
		stdout    string // exact, unless empty
		stderrHas string
	}{
		{name: "memory 128 MiB, 200 MB allocated", lang: "python", code: alloc200MB,
			limits: map[string]any{"memory_mb": 128}, reason: "oom"},
		{name: "template memory (512 MiB), 200 MB allocated", lang: "python", code: alloc200MB,
			reason: "ok", stdout: "209715200\n"},
		// gVisor charges a task to the uid that cloned it: the interpreter,
		// started by the agent (root) before it drops to uid 1000, counts
		// against root, so all 16 of uid 1000's tasks are children and the
		// program counts 17 processes with itself.
		{name: "processes 16, fork until refused", lang: "python", code: forkUntilRefused,
			limits: map[string]any{"processes": 16}, reason: "pids_limit", stdout: "17\n", stderrHas: "BlockingIOError"},
		// H07's fork bomb without the warm-up: every process forks until
		// refused and dies of the uncaught BlockingIOError, so the table
		// has emptied again by the time the program ends; the first
		// process refused hints, and the agent reads the limit then
		// (TestE2ETrustedResults). 1 GiB keeps memory from running out first
		// (each fork costs host memory: gVisor copies 2 MiB on write).
		{name: "processes 32, H07 fork bomb", lang: "python", code: "import os; [os.fork() for _ in iter(int,1)]",
			limits: map[string]any{"processes": 32, "memory_mb": 1024}, reason: "pids_limit", stderrHas: "BlockingIOError"},
		// The same through subprocess, whose children stay alive.
		{name: "processes 16, subprocess until refused", lang: "python",
			code:   "import subprocess\nps = [subprocess.Popen(['sleep', '60']) for _ in range(100)]",
			limits: map[string]any{"processes": 16}, reason: "pids_limit", stderrHas: "BlockingIOError"},
		{name: "disk 32 MiB, 64 MB written", lang: "python", code: write64MB,
			limits: map[string]any{"disk_mb": 32}, reason: "disk_limit", stderrHas: "No space left on device"},
		{name: "template disk (256 MiB), 64 MB written", lang: "python", code: write64MB,
			reason: "ok", stdout: "wrote\n"},
		{name: "open files 64, open until refused", lang: "python", code: openUntilRefused,
			limits: map[string]any{"open_files": 64}, reason: "ok", stdout: "True True 24\n"},
		// The minima are viable: each language starts and runs at all of
		// them at once (in 2 to 8 s, for the quarter of a core).
		{name: "python at every minimum", lang: "python", code: "print(6*7)",
			limits: map[string]any{"memory_mb": 64, "processes": 16, "cpus": 0.25, "disk_mb": 16, "open_files": 64}, reason: "ok", stdout: "42\n"},
		{name: "node at every minimum", lang: "node", code: "console.log(6*7)",
			limits: map[string]any{"memory_mb": 64, "processes": 16, "cpus": 0.25, "disk_mb": 16, "open_files": 64}, reason: "ok", stdout: "42\n"},
		{name: "node at the maxima", lang: "node", code: "console.log(6*7)",
			limits: map[string]any{"memory_mb": 2048, "processes": 256, "cpus": 2, "disk_mb": 2048, "open_files": 4096}, reason: "ok", stdout: "42\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := map[string]any{"language": tc.lang, "code": tc.code}
			if tc.limits != nil {
				body["limits"] = tc.limits
			}
			code, r := e.runLimited(t, body)
			t.Logf("reason %s, exit %d, start %s, stdout %.200q, stderr %.300q", r.Reason, r.ExitCode, r.Start, r.Stdout, r.Stderr)
			if code != http.StatusOK || r.Reason != tc.reason {
				t.Errorf("HTTP %d reason %q, want %q", code, r.Reason, tc.reason)
			}
			if tc.stdout != "" && r.Stdout != tc.stdout {
				t.Errorf("stdout %q, want %q", r.Stdout, tc.stdout)
			}
			if !strings.Contains(r.Stderr, tc.stderrHas) {
				t.Errorf("stderr %q lacks %q", r.Stderr, tc.stderrHas)
			}
			// A template-limits run takes the pool, or a restore when the
			// pool has not refilled yet; an overridden one never does.
			wantStarts := []string{"pool", "restore"}
			if tc.limits != nil {
				wantStarts = []string{"cold"}
			}
			if !slices.Contains(wantStarts, r.Start) {
				t.Errorf("start %q, want one of %v", r.Start, wantStarts)
			}
			// The history has the run as the answer gave it.
			if h := e.lastRun(t); h.Reason != r.Reason || h.ExitCode != r.ExitCode || h.StartKind != r.Start || h.Door != "rest" {
				t.Errorf("history row %+v, want reason %s, exit %d, start %s, door rest", h, r.Reason, r.ExitCode, r.Start)
			}
			e.gone(t, r.SandboxID)
		})
	}

	// The share the program reads inside gVisor is not the host's: the
	// Sentry counts a task as running while the host has throttled or
	// preempted it (0.28-0.43 read on a quiet host, 0.71 on a busy one).
	// So the quota is checked where it is enforced, in the sandbox's host
	// cgroup, sampled while the program spins.
	t.Run("cpus 0.25, spinning", func(t *testing.T) {
		w := watchQuota(t, 25000)
		code, r := e.runLimited(t, map[string]any{"language": "python", "code": cpuShare, "limits": map[string]any{"cpus": 0.25}})
		s := w.stop()
		t.Logf("reason %s, start %s, share read inside %q; host cgroup: %d µs of CPU in %d periods, throttled in %d",
			r.Reason, r.Start, strings.TrimSpace(r.Stdout), s.usedUS, s.periods, s.throttled)
		if code != http.StatusOK || r.Reason != "ok" || r.Start != "cold" {
			t.Fatalf("HTTP %d reason %q start %q, want 200 ok cold", code, r.Reason, r.Start)
		}
		if !s.found {
			t.Skip("no cgroup v1 cpu hierarchy with the sandbox's quota on this host")
		}
		// Each read of the period count and the usage is a moment apart:
		// one period's quota of slack.
		if s.periods < 2 || s.throttled == 0 {
			t.Errorf("the sandbox's cgroup showed %d periods, %d throttled, while the program spun: want the quota to have bitten", s.periods, s.throttled)
		}
		if allowed := (s.periods + 1) * 25000; s.usedUS > allowed {
			t.Errorf("the sandbox used %d µs of CPU in %d periods: over its quota of 25000 µs a period", s.usedUS, s.periods)
		}
		e.gone(t, r.SandboxID)
	})

	t.Run("over the maximum", func(t *testing.T) {
		code, r := e.runLimited(t, map[string]any{"language": "python", "code": "print(1)", "limits": map[string]any{"memory_mb": 4096}})
		if code != http.StatusBadRequest || r.Code != "invalid_request" ||
			r.Message != "limits.memory_mb must be between 64 and 2048 (MiB); got 4096" {
			t.Errorf("HTTP %d %+v, want 400 invalid_request naming limits.memory_mb", code, r)
		}
	})
	e.healthy(t)
}

// quotaWatch samples the host cgroup of the first sandbox that appears
// with a given CFS quota, until stopped.
type quotaWatch struct {
	done chan struct{}
	res  chan quotaSample
}

// quotaSample is what a quotaWatch saw while the sandbox was throttled.
type quotaSample struct {
	found                      bool
	usedUS, periods, throttled int64
}

// cpuRead is one read of a cgroup's usage (ns) and CFS counters.
type cpuRead struct{ usage, periods, throttled int64 }

// watchQuota starts sampling, every few milliseconds, the cgroup v1 cpu
// and cpuacct directories of the first sandbox under
// /sys/fs/cgroup/cpu/paddock that appears after the call with
// cpu.cfs_quota_us == quotaUS. It measures from the first read that finds
// the sandbox throttled to the last read at which it had been throttled
// again: a stretch in which it always wanted the CPU, so that every
// period in it counts (a period in which the group only woke now and
// then, as while booting or exiting, is not counted in nr_periods).
func watchQuota(t *testing.T, quotaUS int64) *quotaWatch {
	t.Helper()
	const root = "/sys/fs/cgroup/cpu/paddock"
	before := map[string]bool{}
	dirs, _ := filepath.Glob(root + "/*")
	for _, d := range dirs {
		before[d] = true
	}
	w := &quotaWatch{done: make(chan struct{}), res: make(chan quotaSample, 1)}
	go func() {
		var (
			s          quotaSample
			dir        string
			first, end cpuRead
			prev       cpuRead
			measuring  bool
		)
		defer func() {
			if measuring {
				s.usedUS, s.periods, s.throttled = (end.usage-first.usage)/1000, end.periods-first.periods, end.throttled-first.throttled
			}
			w.res <- s
		}()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-w.done:
				return
			case <-tick.C:
			}
			if dir == "" {
				dirs, _ := filepath.Glob(root + "/*")
				for _, d := range dirs {
					q, err := os.ReadFile(filepath.Join(d, "cpu.cfs_quota_us"))
					if !before[d] && err == nil && strings.TrimSpace(string(q)) == strconv.FormatInt(quotaUS, 10) {
						dir, s.found = d, true
						break
					}
				}
				continue
			}
			r, ok := readCPU(dir)
			switch {
			case !ok:
				return // the sandbox is gone: the last read stands
			case !measuring && r.throttled > 0:
				measuring, first, end = true, r, r
			case measuring && r.throttled > prev.throttled:
				end = r
			}
			prev = r
		}
	}()
	return w
}

// readCPU reads cpu.stat in the cgroup v1 cpu directory dir and
// cpuacct.usage in its cpuacct twin.
func readCPU(dir string) (cpuRead, bool) {
	var r cpuRead
	b, err := os.ReadFile(filepath.Join(dir, "cpu.stat"))
	if err != nil {
		return r, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, " ")
		n, _ := strconv.ParseInt(v, 10, 64)
		switch k {
		case "nr_periods":
			r.periods = n
		case "nr_throttled":
			r.throttled = n
		}
	}
	u, err := os.ReadFile(filepath.Join(strings.Replace(dir, "/cpu/", "/cpuacct/", 1), "cpuacct.usage"))
	if err != nil {
		return r, false
	}
	r.usage, err = strconv.ParseInt(strings.TrimSpace(string(u)), 10, 64)
	return r, err == nil
}

// stop ends the sampling and returns what it saw.
func (w *quotaWatch) stop() quotaSample {
	close(w.done)
	return <-w.res
}
