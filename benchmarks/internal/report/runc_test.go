package report

import (
	"math"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

func TestRuncHeadlines(t *testing.T) {
	rows := []stats.Row{
		rowOf("python", "print(1)", stats.ModeCold, 2400),
		rowOf("python", "print(1)", stats.ModeRuncCold, 300),
		rowOf("python", "print(1)", stats.ModePool, 3),
		rowOf("python", "print(1)", stats.ModeRuncPool, 2),
		rowOf("python", "x + 1", stats.ModeSession, 0.9),
		rowOf("python", "x + 1", stats.ModeRuncSession, 0.6),
	}
	tps := []Throughput{
		{Lang: "python", Target: TargetPaddock, Runs: 40, Elapsed: 5 * time.Second},
		{Lang: "python", Target: TargetRunc, Runs: 80, Elapsed: 5 * time.Second},
	}
	mems := []MemRow{
		{Lang: "python", Server: "pooled (pool 2, snapshots on)", Start: "restore", Samples: []MemSample{{Usage: 60 << 20}}},
		{Lang: "python", Server: "cold pooled (pool 2, snapshots off)", Start: "cold", Samples: []MemSample{{Usage: 90 << 20}}},
		{Lang: "python", Server: "runc pooled (runc, pool 2, snapshots off)", Start: "runc", Samples: []MemSample{{Usage: 40 << 20}}},
	}
	want := []struct {
		what  string
		value float64
	}{
		{"python `print(1)`: cold start p50, gVisor ÷ runc", 8},
		{"python `print(1)`: warm one-shot p50, gVisor ÷ runc", 1.5},
		{"python session `x + 1` round trip p50, gVisor ÷ runc", 1.5},
		{"python one-shot throughput, gVisor ÷ runc (below 1: runc serves more)", 0.5},
		{"python idle pooled sandbox host memory (gVisor made by restore), gVisor ÷ runc", 1.5},
	}
	got := runcHeadlines(rows, tps, mems)
	if len(got) != len(want) {
		t.Fatalf("got %d headlines, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].What != w.what || math.Abs(got[i].Value-w.value) > 1e-9 || got[i].Meets != nil {
			t.Errorf("headline %d = %q %v (meets %v), want %q %v with no target", i, got[i].What, got[i].Value, got[i].Meets, w.what, w.value)
		}
	}
}
