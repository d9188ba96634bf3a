package main

import (
	"testing"
	"time"
)

func rowOf(lang, probe, mode string, ms ...float64) row {
	r := row{Lang: lang, Probe: probe, Mode: mode}
	for _, v := range ms {
		r.Samples = append(r.Samples, sample{D: time.Duration(v * float64(time.Millisecond)), Counted: true})
	}
	return r
}

func TestHeadlines(t *testing.T) {
	rows := []row{
		rowOf("python", "import pandas", modeCold, 2000),
		rowOf("python", "import pandas", modeRestore, 200),
		rowOf("python", "print(1)", modeNative, 20),
		rowOf("python", "print(1)", modePool, 3),
		rowOf("python", "print(1)", modeCold, 2400),
		rowOf("python", "print(1)", modeRaw, 300),
		rowOf("python", "x + 1", modeSession, 0.5),
	}
	tps := []throughput{
		{Lang: "python", Target: targetPaddock, Runs: 45, Elapsed: 5 * time.Second},
		{Lang: "python", Target: targetRaw, Runs: 50, Elapsed: 5 * time.Second},
	}
	mems := []memRow{{Lang: "python", Start: "restore", Samples: []memSample{{Usage: 30 << 20}}}}
	want := []struct {
		value float64
		meets bool
	}{
		{0.1, true},  // restore / cold, pandas
		{0.15, true}, // warm pool / native, print(1)
		{0.9, true},  // throughput / raw
		{9, false},   // runs/s
		{0.5, true},  // session ms
		{30, false},  // MiB
		{8, false},   // cold / raw runsc
	}
	got := headlines(rows, tps, mems)
	if len(got) != len(want) {
		t.Fatalf("%d headlines, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		if !near(got[i].Value, w.value) || got[i].Meets != w.meets {
			t.Errorf("headline %d %q = %v (meets %v), want %v (meets %v)", i, got[i].What, got[i].Value, got[i].Meets, w.value, w.meets)
		}
	}
}

func TestSortRows(t *testing.T) {
	rows := []row{
		rowOf("node", "console.log(1)", modePool, 1),
		rowOf("python", "x + 1", modeSession, 1),
		rowOf("python", "import pandas", modeCold, 1),
		rowOf("python", "print(1)", modePool, 1),
		rowOf("python", "print(1)", modeNative, 1),
	}
	sortRows(rows)
	var got []string
	for _, r := range rows {
		got = append(got, r.Lang+"/"+r.Probe+"/"+r.Mode)
	}
	want := []string{"python/print(1)/native", "python/print(1)/warm pool", "python/import pandas/cold", "node/console.log(1)/warm pool", "python/x + 1/session"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
}

func TestProbeChecks(t *testing.T) {
	py, _ := langByName("python")
	node, _ := langByName("node")
	tests := []struct {
		name string
		p    probe
		out  string
		want bool
	}{
		{"print(1)", py.probes[0], "1\n", true},
		{"print(1) wrong", py.probes[0], "2\n", false},
		{"pandas version", py.probes[1], "1.5.3\n", true},
		{"pandas dev version", py.probes[1], "2.2.0rc1\n", true},
		{"pandas traceback", py.probes[1], "", false},
		{"zlib", node.probes[1], "9\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.ok(tt.out); got != tt.want {
				t.Errorf("ok(%q) = %v, want %v", tt.out, got, tt.want)
			}
		})
	}
}
