package agent

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLimitReason(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	tests := []struct {
		name   string
		reason string
		st     limitState
		want   string
	}{
		{name: "ok stays ok at the limits", reason: "ok", st: limitState{tasks: 32, nproc: 32, free: 0}, want: "ok"},
		{name: "plain error", reason: "error", st: limitState{tasks: 1, nproc: 32, free: 50 * mib}, want: "error"},
		{name: "error at the process limit", reason: "error", st: limitState{tasks: 32, nproc: 32, free: 50 * mib}, want: "pids_limit"},
		{name: "error two below the limit", reason: "error", st: limitState{tasks: 30, nproc: 32, free: 50 * mib}, want: "pids_limit"},
		{name: "error three below the limit", reason: "error", st: limitState{tasks: 29, nproc: 32, free: 50 * mib}, want: "error"},
		{name: "killed at the process limit", reason: "killed", st: limitState{tasks: 31, nproc: 32, free: -1}, want: "pids_limit"},
		{name: "timeout at the process limit", reason: "timeout", st: limitState{tasks: 32, nproc: 32, free: -1}, want: "pids_limit"},
		{name: "timeout below the process limit", reason: "timeout", st: limitState{tasks: 5, nproc: 32, free: -1}, want: "timeout"},
		{name: "no process limit", reason: "error", st: limitState{tasks: 5000, nproc: 0, free: -1}, want: "error"},
		{name: "output flood at the process limit", reason: "output_limit", st: limitState{tasks: 32, nproc: 32, free: 0}, want: "output_limit"},
		{name: "error on a full disk", reason: "error", st: limitState{tasks: 1, nproc: 32, free: 4096}, want: "disk_limit"},
		{name: "error just under a MiB free", reason: "error", st: limitState{tasks: 1, nproc: 32, free: mib - 1}, want: "disk_limit"},
		{name: "error with a MiB free", reason: "error", st: limitState{tasks: 1, nproc: 32, free: mib}, want: "error"},
		{name: "killed on a full disk", reason: "killed", st: limitState{tasks: 1, nproc: 32, free: 0}, want: "disk_limit"},
		{name: "timeout on a full disk", reason: "timeout", st: limitState{tasks: 1, nproc: 32, free: 0}, want: "timeout"},
		{name: "output flood on a full disk", reason: "output_limit", st: limitState{tasks: 1, nproc: 32, free: 0}, want: "output_limit"},
		{name: "free space unknown", reason: "error", st: limitState{tasks: 1, nproc: 32, free: -1}, want: "error"},
		{name: "processes win over disk", reason: "error", st: limitState{tasks: 32, nproc: 32, free: 0}, want: "pids_limit"},
		{name: "error of a refused fork, processes gone", reason: "error", st: limitState{tasks: 1, nproc: 32, free: -1, forkRefused: true}, want: "pids_limit"},
		{name: "refused fork, then killed", reason: "killed", st: limitState{tasks: 1, nproc: 32, free: -1, forkRefused: true}, want: "killed"},
		{name: "refused fork, then timeout", reason: "timeout", st: limitState{tasks: 1, nproc: 32, free: -1, forkRefused: true}, want: "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := limitReason(tt.reason, tt.st); got != tt.want {
				t.Errorf("limitReason(%q, %+v) = %q, want %q", tt.reason, tt.st, got, tt.want)
			}
		})
	}
}

func TestLimitProbeTakesTheFirstState(t *testing.T) {
	t.Parallel()
	tasks := 32
	p := &limitProbe{
		tasks: func() int { return tasks },
		nproc: func() int { return 32 },
		free:  func() int64 { return 4096 },
	}
	first := p.take()
	tasks = 0 // the agent killed them
	if got := p.take(); got != first || got != (limitState{tasks: 32, nproc: 32, free: 4096}) {
		t.Errorf("take = %+v then %+v, want {32 32 4096} twice", first, got)
	}
}

func TestNilLimitProbe(t *testing.T) {
	t.Parallel()
	var p *limitProbe
	if got := p.take(); got != (limitState{free: -1}) {
		t.Errorf("nil probe took %+v, want nothing known", got)
	}
	if got := limitReason("error", p.take()); got != "error" {
		t.Errorf("reason %q with a nil probe, want error", got)
	}
}

func TestCountTasks(t *testing.T) {
	t.Parallel()
	proc := t.TempDir()
	procs := []struct {
		pid     string
		status  string
		threads int
	}{
		{"1", "Name:\tpaddock-agent\nUid:\t0\t0\t0\t0\n", 7},
		{"12", "Name:\tpython3\nUid:\t1000\t1000\t1000\t1000\n", 3},
		{"13", "Name:\tpython3\nUid:\t1000\t1000\t1000\t1000\n", 1},
		{"14", "Name:\tsetuid\nUid:\t0\t1000\t1000\t1000\n", 1},
		{"self", "Name:\tpython3\nUid:\t1000\t1000\t1000\t1000\n", 1},
		{"16", "Name:\tpython3\nState:\tZ (zombie)\nUid:\t1000\t1000\t1000\t1000\n", 0},
	}
	for _, p := range procs {
		if err := os.MkdirAll(filepath.Join(proc, p.pid), 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range p.threads {
			if err := os.MkdirAll(filepath.Join(proc, p.pid, "task", string(rune('a'+i))), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(proc, p.pid, "status"), []byte(p.status), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A process that ended between the listing and the read.
	if err := os.Mkdir(filepath.Join(proc, "15"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := countTasks(proc, 1000); got != 5 {
		t.Errorf("countTasks = %d, want 5", got)
	}
}

func TestLeastFree(t *testing.T) {
	t.Parallel()
	if got := leastFree(filepath.Join(t.TempDir(), "missing")); got != -1 {
		t.Errorf("leastFree of a missing path = %d, want -1", got)
	}
	if got := leastFree(t.TempDir()); got < 0 {
		t.Errorf("leastFree of a temporary directory = %d, want a size", got)
	}
}
