package agent

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestLimitReason(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	atPids := limitState{tasks: 32, nproc: 32, free: 50 * mib}
	full := limitState{tasks: 1, nproc: 32, free: 0}
	tests := []struct {
		name   string
		reason string
		hint   string
		at     limitState
		want   string
	}{
		{name: "ok stays ok at the limits", reason: "ok", hint: "processes", at: limitState{tasks: 32, nproc: 32, free: 0}, want: "ok"},
		{name: "plain error", reason: "error", at: limitState{tasks: 1, nproc: 32, free: 50 * mib}, want: "error"},
		{name: "refused fork at the process limit", reason: "error", hint: "processes", at: atPids, want: "pids_limit"},
		{name: "refused fork over the process limit", reason: "error", hint: "processes", at: limitState{tasks: 33, nproc: 32, free: -1}, want: "pids_limit"},
		// One short of the limit, a process start would still succeed.
		{name: "hint one below the process limit", reason: "error", hint: "processes", at: limitState{tasks: 31, nproc: 32, free: -1}, want: "error"},
		{name: "at the process limit without a hint", reason: "error", at: atPids, want: "error"},
		{name: "disk hint at the process limit", reason: "error", hint: "disk", at: atPids, want: "error"},
		{name: "hint, no process limit", reason: "error", hint: "processes", at: limitState{tasks: 5000, nproc: 0, free: -1}, want: "error"},
		{name: "hint, nothing read", reason: "error", hint: "processes", at: unknownState, want: "error"},
		{name: "killed at the process limit", reason: "killed", hint: "processes", at: atPids, want: "killed"},
		{name: "timeout at the process limit", reason: "timeout", hint: "processes", at: atPids, want: "timeout"},
		{name: "output flood at the process limit", reason: "output_limit", hint: "processes", at: atPids, want: "output_limit"},
		{name: "ENOSPC on a full disk", reason: "error", hint: "disk", at: full, want: "disk_limit"},
		{name: "ENOSPC with a page free", reason: "error", hint: "disk", at: limitState{tasks: 1, nproc: 32, free: 4096}, want: "error"},
		{name: "full disk without a hint", reason: "error", at: full, want: "error"},
		{name: "process hint on a full disk", reason: "error", hint: "processes", at: full, want: "error"},
		{name: "killed on a full disk", reason: "killed", hint: "disk", at: full, want: "killed"},
		{name: "timeout on a full disk", reason: "timeout", hint: "disk", at: full, want: "timeout"},
		{name: "unknown hint", reason: "error", hint: "pids", at: atPids, want: "error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := limitReason(tt.reason, tt.hint, tt.at); got != tt.want {
				t.Errorf("limitReason(%q, %q, %+v) = %q, want %q", tt.reason, tt.hint, tt.at, got, tt.want)
			}
		})
	}
}

func TestLimitsReached(t *testing.T) {
	t.Parallel()
	tests := []struct {
		st   limitState
		want []string
	}{
		{st: unknownState, want: nil},
		{st: limitState{tasks: 31, nproc: 32, free: 1}, want: nil},
		{st: limitState{tasks: 32, nproc: 32, free: 1}, want: []string{"processes"}},
		{st: limitState{tasks: 3, nproc: 32, free: 0}, want: []string{"disk"}},
		{st: limitState{tasks: 40, nproc: 32, free: 0}, want: []string{"processes", "disk"}},
		{st: limitState{tasks: 40, nproc: 0, free: -1}, want: nil},
	}
	for _, tt := range tests {
		if got := tt.st.reached(); !slices.Equal(got, tt.want) {
			t.Errorf("%+v reached %q, want %q", tt.st, got, tt.want)
		}
	}
}

func TestMergeStates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b, want limitState
	}{
		{a: unknownState, b: unknownState, want: unknownState},
		{a: unknownState, b: limitState{tasks: 3, nproc: 32, free: 10}, want: limitState{tasks: 3, nproc: 32, free: 10}},
		{a: limitState{tasks: 32, nproc: 32, free: 10}, b: limitState{tasks: 2, nproc: 32, free: 0}, want: limitState{tasks: 32, nproc: 32, free: 0}},
		{a: limitState{tasks: 2, nproc: 32, free: 0}, b: unknownState, want: limitState{tasks: 2, nproc: 32, free: 0}},
	}
	for _, tt := range tests {
		if got := mergeStates(tt.a, tt.b); got != tt.want {
			t.Errorf("mergeStates(%+v, %+v) = %+v, want %+v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestLimitProbeTakesTheFirstState(t *testing.T) {
	t.Parallel()
	tasks := 32
	held := 0
	p := &limitProbe{
		tasks: func() int { return tasks },
		nproc: func() int { return 32 },
		free:  func() int64 { return 4096 },
		hold:  func() func() { held++; return func() { held-- } },
	}
	first := p.take()
	tasks = 0 // the agent killed them
	if got := p.take(); got != first || got != (limitState{tasks: 32, nproc: 32, free: 4096}) {
		t.Errorf("take = %+v then %+v, want {32 32 4096} twice", first, got)
	}
	if got := p.read(); got != (limitState{tasks: 0, nproc: 32, free: 4096}) || held != 0 {
		t.Errorf("read = %+v with %d holds left, want {0 32 4096} and none", got, held)
	}
}

// The probe counts with the reaper held, so no task vanishes by the
// agent's hand while it counts.
func TestLimitProbeHoldsTheReaper(t *testing.T) {
	t.Parallel()
	held := false
	p := &limitProbe{
		tasks: func() int {
			if !held {
				t.Error("tasks counted with the reaper running")
			}
			return 1
		},
		nproc: func() int { return 32 },
		free:  func() int64 { return -1 },
		hold:  func() func() { held = true; return func() { held = false } },
	}
	p.read()
	if held {
		t.Error("the reaper is still held after the reading")
	}
}

func TestNilLimitProbe(t *testing.T) {
	t.Parallel()
	var p *limitProbe
	if got := p.take(); got != unknownState {
		t.Errorf("nil probe took %+v, want nothing known", got)
	}
	if got := p.read(); got != unknownState {
		t.Errorf("nil probe read %+v, want nothing known", got)
	}
	if got := limitReason("error", "processes", p.take()); got != "error" {
		t.Errorf("reason %q with a nil probe, want error", got)
	}
}

func TestChargedTasks(t *testing.T) {
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
	if got := chargedTasks(proc, 1000, 0); got != 5 {
		t.Errorf("chargedTasks = %d, want 5", got)
	}
	// The interpreter's main task was cloned by the agent, as root, and is
	// charged to root; its other threads are the user's.
	if got := chargedTasks(proc, 1000, 12); got != 4 {
		t.Errorf("chargedTasks with 12 the interpreter = %d, want 4", got)
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

func TestUncharged(t *testing.T) {
	if got := uncharged(Config{}, 12); got != 12 {
		t.Errorf("on gVisor: %d, want the interpreter, 12", got)
	}
	if got := uncharged(Config{HostKernel: true}, 12); got != 0 {
		t.Errorf("on the host's kernel: %d, want none, 0", got)
	}
}
