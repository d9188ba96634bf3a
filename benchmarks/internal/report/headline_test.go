package report

import (
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

func rowOf(lang, probe, mode string, ms ...float64) stats.Row {
	r := stats.Row{Lang: lang, Probe: probe, Mode: mode}
	for _, v := range ms {
		r.Samples = append(r.Samples, stats.Sample{D: time.Duration(v * float64(time.Millisecond)), Counted: true})
	}
	return r
}

func TestHeadlines(t *testing.T) {
	rows := []stats.Row{
		rowOf("python", "import pandas", stats.ModeCold, 2000),
		rowOf("python", "import pandas", stats.ModeRestore, 200),
		rowOf("python", "import pandas", stats.ModeRawRestore, 160),
		rowOf("python", "print(1)", stats.ModeNative, 20),
		rowOf("python", "print(1)", stats.ModeHost, 10), // never a baseline
		rowOf("python", "print(1)", stats.ModePool, 3),
		rowOf("python", "print(1)", stats.ModeBusy, 30),
		rowOf("python", "print(1)", stats.ModeCold, 2400),
		rowOf("python", "print(1)", stats.ModeRaw, 300),
		rowOf("python", "x + 1", stats.ModeSession, 0.5),
		rowOf("node", "console.log(1)", stats.ModeNative, 50),
		rowOf("node", "console.log(1)", stats.ModeBusy, 5),
	}
	tps := []Throughput{
		{Lang: "python", Target: TargetPaddock, Runs: 45, Elapsed: 5 * time.Second},
		{Lang: "python", Target: TargetRawRestore, Runs: 50, Elapsed: 5 * time.Second},
		{Lang: "python", Target: TargetRaw, Runs: 15, Elapsed: 5 * time.Second},
		{Lang: "node", Target: TargetPaddock, Runs: 20, Elapsed: 5 * time.Second},
		{Lang: "node", Target: TargetRaw, Runs: 20, Elapsed: 5 * time.Second},
	}
	mems := []MemRow{
		{Lang: "python", Start: "cold", Samples: []MemSample{{Usage: 95 << 20}}},
		{Lang: "python", Start: "restore", Samples: []MemSample{{Usage: 85 << 20}}},
		{Lang: "python-slim", Start: "restore", Samples: []MemSample{{Usage: 24 << 20}}},
		{Lang: "node", Start: "cold", Samples: []MemSample{{Usage: 30 << 20}}},
	}
	natives := []NativeRSS{{Template: "python", Samples: []ProcRSSSample{{VmRSS: 80 << 20}}}}
	yes, no := true, false
	want := []struct {
		what  string
		value float64
		meets *bool
	}{
		{"python `import pandas`: snapshot restore p50 / cold p50", 0.1, &yes},
		{"python `print(1)`: warm pool idle p50 / native rootfs p50", 0.15, &yes},
		{"python `print(1)`: warm pool busy p50 / native rootfs p50", 1.5, &no},
		{"node `console.log(1)`: warm pool busy p50 / native rootfs p50", 0.1, &yes},
		{"python one-shot throughput / raw runsc restore+delete rate (same start: restore)", 0.9, &yes},
		{"python one-shot throughput / raw runsc run+delete rate (the doc's target)", 3, &yes},
		{"node one-shot throughput / raw runsc run+delete rate (same start: cold)", 1, &yes},
		{"python one-shot throughput, fresh sandbox per run", 9, &no},
		{"node one-shot throughput, fresh sandbox per run", 4, &no},
		{"python session `x + 1` round trip p50", 0.5, &yes},
		{"python idle pooled sandbox (made by cold), host memory (warmed: native RSS 80.0 MiB + 10)", 95, &no},
		{"python idle pooled sandbox (made by restore), host memory (warmed: native RSS 80.0 MiB + 10)", 85, &yes},
		{"python-slim idle pooled sandbox (made by restore), host memory (no warm-up: a fixed bound)", 24, &yes},
		{"node idle pooled sandbox (made by cold), host memory (no warm-up: a fixed bound)", 30, &no},
		{"python `print(1)`: cold one-shot p50 / raw runsc run+delete p50", 8, &no},
		{"python `import pandas`: restore one-shot p50 / raw runsc restore+delete p50", 1.25, nil},
	}
	got := headlines(rows, tps, mems, natives)
	if len(got) != len(want) {
		t.Fatalf("%d headlines, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.What != w.what || !near(g.Value, w.value) || (g.Meets == nil) != (w.meets == nil) || (g.Meets != nil && *g.Meets != *w.meets) {
			t.Errorf("headline %d = %q %v (meets %v), want %q %v (meets %v)", i, g.What, g.Value, fmtMeets(g.Meets), w.what, w.value, fmtMeets(w.meets))
		}
	}
}

func fmtMeets(b *bool) string {
	if b == nil {
		return "no target"
	}
	if *b {
		return "yes"
	}
	return "no"
}

func TestHeadlineString(t *testing.T) {
	tests := []struct {
		h    headline
		want string
	}{
		{newHeadline("a", 0.25, "x", true, 0.2), "a" + strings.Repeat(" ", 79) + "     0.250 x      target ≤ 0.2: misses"},
		{newHeadline("b", 12, "runs/s", false, 10), "b" + strings.Repeat(" ", 79) + "    12.000 runs/s target ≥ 10: meets"},
		{untargeted("c", 1.5, "x"), "c" + strings.Repeat(" ", 79) + "     1.500 x      no target"},
	}
	for _, tt := range tests {
		if got := tt.h.String(); got != tt.want {
			t.Errorf("String() =\n%q, want\n%q", got, tt.want)
		}
	}
}

func TestSortRows(t *testing.T) {
	rows := []stats.Row{
		rowOf("node", "console.log(1)", stats.ModePool, 1),
		rowOf("python", "x + 1", stats.ModeSession, 1),
		rowOf("python", "import pandas", stats.ModeCold, 1),
		rowOf("python", "print(1)", stats.ModePool, 1),
		rowOf("python", "print(1)", stats.ModeNative, 1),
	}
	SortRows(rows)
	var got []string
	for _, r := range rows {
		got = append(got, r.Lang+"/"+r.Probe+"/"+r.Mode)
	}
	want := []string{"python/print(1)/native rootfs", "python/print(1)/warm pool idle", "python/import pandas/cold", "node/console.log(1)/warm pool idle", "python/x + 1/session"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
}

func near(a, b float64) bool { return a/b > 0.999999 && a/b < 1.000001 }
