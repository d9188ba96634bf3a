package report

import "testing"

func TestTailHeadlines(t *testing.T) {
	ts := []SessionTail{{
		Binary: "after",
		Idle:   TailCells{N: 3000, P50MS: 1.5, P99MS: 4},
		Loaded: []TailCells{{Clients: 1, P99MS: 4}, {Clients: 4, P99MS: 6}, {Clients: 16, P99MS: 14}},
		OneShots: []TailRate{
			{Clients: 4, WithoutRate: 8, WithRate: 7.8},
			{Clients: 16, WithoutRate: 6, WithRate: 3},
			{Clients: 1, WithoutRate: 0, WithRate: 1}, // nothing without: no ratio
		},
	}}
	type want struct {
		what  string
		value float64
		meets *bool // nil: no target
	}
	yes, no := true, false
	wants := []want{
		{"after: session x + 1 p99 while 1 clients stream one-shots ÷ idle p99", 1, nil},
		{"after: session x + 1 p99 while 4 clients stream one-shots ÷ idle p99", 1.5, &yes},
		{"after: session x + 1 p99 while 16 clients stream one-shots ÷ idle p99", 3.5, nil},
		{"after: one-shots/s at 4 clients beside a busy session ÷ without", 0.975, &yes},
		{"after: one-shots/s at 16 clients beside a busy session ÷ without", 0.5, &no},
	}
	got := tailHeadlines(ts)
	if len(got) != len(wants) {
		t.Fatalf("%d headlines, want %d: %v", len(got), len(wants), got)
	}
	for i, w := range wants {
		g := got[i]
		if g.What != w.what || g.Value != w.value || (g.Meets == nil) != (w.meets == nil) || (g.Meets != nil && *g.Meets != *w.meets) {
			t.Errorf("headline %d = %q %v meets %v, want %q %v meets %v", i, g.What, g.Value, g.Meets, w.what, w.value, w.meets)
		}
	}
}

func TestTailHeadlinesSkipNoIdle(t *testing.T) {
	if got := tailHeadlines([]SessionTail{{Binary: "after", Loaded: []TailCells{{Clients: 4, P99MS: 6}}}}); len(got) != 0 {
		t.Fatalf("headlines without idle cells: %v", got)
	}
}
