package report

import (
	"bytes"
	"testing"
)

func TestMemTarget(t *testing.T) {
	tests := []struct {
		name       string
		warmed     bool
		native     *NativeRSS
		wantTarget float64
		wantBasis  string
		wantOK     bool
	}{
		{"slim, nothing measured", false, nil, 25, "no warm-up: a fixed bound", true},
		{"slim ignores a native RSS", false, &NativeRSS{Samples: []ProcRSSSample{{VmRSS: 12 << 20}}}, 25, "no warm-up: a fixed bound", true},
		{"warmed: the mean VmRSS plus 10", true, &NativeRSS{Samples: []ProcRSSSample{{VmRSS: 80 << 20, RssAnon: 50 << 20}, {VmRSS: 89 << 20}}},
			94.5, "warmed: native RSS 84.5 MiB + 10", true},
		{"warmed: rounded to 0.1 MiB", true, &NativeRSS{Samples: []ProcRSSSample{{VmRSS: 87654321}}}, 93.6, "warmed: native RSS 83.6 MiB + 10", true},
		{"warmed, not measured", true, nil, 0, "warmed: native RSS not measured", false},
		{"warmed, no samples", true, &NativeRSS{Template: "python"}, 0, "warmed: native RSS not measured", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target, basis, ok := memTarget(tt.warmed, tt.native)
			if target != tt.wantTarget || basis != tt.wantBasis || ok != tt.wantOK {
				t.Errorf("memTarget = %v, %q, %v; want %v, %q, %v", target, basis, ok, tt.wantTarget, tt.wantBasis, tt.wantOK)
			}
		})
	}
}

func TestMemHeadlinesJudgeEachTemplateByItsOwnBound(t *testing.T) {
	mems := []MemRow{
		{Lang: "python", Start: "restore", Samples: []MemSample{{Usage: 95 << 20}, {Usage: 97 << 20}}},
		{Lang: "python-slim", Start: "restore", Samples: []MemSample{{Usage: 26 << 20}}},
		{Lang: "node", Start: "cold", Samples: []MemSample{{Usage: 25 << 20}}},
		{Lang: "ruby", Start: "cold", Samples: []MemSample{{Usage: 10 << 20}}},
		{Lang: "node", Start: "runc"}, // no samples: no headline
	}
	natives := []NativeRSS{
		{Template: "node", Samples: []ProcRSSSample{{VmRSS: 40 << 20}}},
		{Template: "python", Samples: []ProcRSSSample{{VmRSS: 86 << 20}}},
	}
	yes, no := true, false
	want := []struct {
		what   string
		value  float64
		target float64
		meets  *bool
	}{
		{"python idle pooled sandbox (made by restore), host memory (warmed: native RSS 86.0 MiB + 10)", 96, 96, &yes},
		{"python-slim idle pooled sandbox (made by restore), host memory (no warm-up: a fixed bound)", 26, 25, &no},
		{"node idle pooled sandbox (made by cold), host memory (no warm-up: a fixed bound)", 25, 25, &yes},
		{"ruby idle pooled sandbox (made by cold), host memory (unknown template)", 10, 0, nil},
	}
	got := memHeadlines(mems, natives)
	if len(got) != len(want) {
		t.Fatalf("%d headlines, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.What != w.what || g.Value != w.value || g.Target != w.target || fmtMeets(g.Meets) != fmtMeets(w.meets) || !g.AtMost && w.meets != nil {
			t.Errorf("headline %d = %q %v target %v (meets %s), want %q %v target %v (meets %s)", i, g.What, g.Value, g.Target, fmtMeets(g.Meets),
				w.what, w.value, w.target, fmtMeets(w.meets))
		}
	}
	// Without the native RSS the pandas-ready template has no bound: not 25.
	got = memHeadlines(mems[:1], nil)
	if len(got) != 1 || got[0].Meets != nil || got[0].What != "python idle pooled sandbox (made by restore), host memory (warmed: native RSS not measured)" {
		t.Errorf("unmeasured native RSS: %v", got)
	}
}

func TestPrintMemoryShowsNativeRSSAndTarget(t *testing.T) {
	var buf bytes.Buffer
	printMemory(&buf, []MemRow{
		{Lang: "python", Start: "restore", Server: "memory", Samples: []MemSample{{Usage: 95 << 20, RSS: 21 << 20, SentryAnon: 16 << 20, GoferAnon: 5 << 20, Shmem: 74 << 20}}},
		{Lang: "node", Start: "cold", Server: "memory", Samples: []MemSample{{Usage: 30 << 20, RSS: 13 << 20, SentryAnon: 8 << 20, GoferAnon: 5 << 20, Shmem: 17 << 20}}},
	}, []NativeRSS{{Template: "python", Samples: []ProcRSSSample{{VmRSS: 85 << 20}}}})
	want := "template  made by  server  sandboxes  usage MiB/sandbox  rss MiB/sandbox  of which Sentry anon  gofer anon  shmem MiB/sandbox  native RSS MiB  target MiB                                 note  \n" +
		"python    restore  memory  1          95.0               21.0             16.0                  5.0         74.0               85.0            ≤ 95.0 (warmed: native RSS 85.0 MiB + 10)        \n" +
		"node      cold     memory  1          30.0               13.0             8.0                   5.0         17.0               -               ≤ 25.0 (no warm-up: a fixed bound)               \n"
	if got := buf.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
