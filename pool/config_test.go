package pool_test

import (
	"testing"

	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

func TestNewRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  pool.Config
		want string
	}{
		{name: "unnamed template", cfg: pool.Config{Templates: []pool.Template{{Size: 1}}}, want: "pool config: template 0 has no name"},
		{name: "duplicate template", cfg: pool.Config{Templates: []pool.Template{tmpl("python", 1), tmpl("python", 2)}}, want: `pool config: duplicate template "python"`},
		{name: "negative size", cfg: pool.Config{Templates: []pool.Template{tmpl("python", -1)}}, want: `pool config: template "python" has negative size`},
		{name: "negative limit", cfg: pool.Config{MaxRuns: -1}, want: "pool config: negative limit"},
		{name: "negative start budget", cfg: pool.Config{StartBudget: -1}, want: "pool config: negative limit"},
		{name: "negative queue deadline", cfg: pool.Config{QueueDeadline: -1}, want: "pool config: negative limit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := pool.New(&runnertest.Runtime{}, tc.cfg, nil)
			if err == nil {
				t.Fatalf("New succeeded (%v), want %q", m, tc.want)
			}
			if err.Error() != tc.want {
				t.Errorf("New error = %q, want %q", err, tc.want)
			}
		})
	}
}

func TestStatsAndReady(t *testing.T) {
	rt := &runnertest.Runtime{}
	m := newManager(t, rt, pool.Config{Templates: []pool.Template{tmpl("python", 2), tmpl("node", 0)}})
	waitFor(t, "ready", m.Ready)
	waitFor(t, "python filled", readyCount(m, "python"))

	lease, err := m.Acquire(t.Context(), "node")
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	got := m.Stats()
	m.Release(lease.Sandbox)
	want := []pool.Stats{
		{Template: "python", Target: 2, Floor: 2, Ceiling: 2, Ready: 2, ColdStarts: 2, Snapshot: "off", NetworkSnapshot: "off", Healthy: true, Image: pool.ImageReady},
		{Template: "node", Target: 0, InUse: 1, Misses: 1, ColdStarts: 1, Snapshot: "off", NetworkSnapshot: "off", Healthy: true, Image: pool.ImageReady},
	}
	if len(got) != len(want) {
		t.Fatalf("Stats = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Stats[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	if names := m.Templates(); len(names) != 2 || names[0] != "python" || names[1] != "node" {
		t.Errorf("Templates = %q, want [python node]", names)
	}
}
