package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// msRow is a row of the given millisecond samples, all counted.
func msRow(lang, probe, mode string, ms ...int) stats.Row {
	r := stats.Row{Lang: lang, Probe: probe, Mode: mode}
	for _, v := range ms {
		r.Samples = append(r.Samples, stats.Sample{D: time.Duration(v) * time.Millisecond, Counted: true})
	}
	return r
}

func TestHibernateHeadlines(t *testing.T) {
	rows := []stats.Row{
		msRow("python", ProbeColdStart, ModeSessionCold, 450, 400, 500),
		msRow("python", ProbeColdState, ModeSessionCold, 3000, 2800, 3200),
		msRow("python", ProbeResume, ModeHibernateIdle, 280, 300, 260),
		msRow("python", ProbePause, ModeHibernateIdle, 210, 220, 200),
		msRow("python", ProbeFirstCell, ModeHibernateIdle, 3, 4, 5),
		msRow("python", ProbeResume, ModeHibernateBusy, 420, 400, 450),
		// Node: a resume and no cold start: no ratio, the time aim only.
		msRow("node", ProbeResume, ModeHibernateIdle, 150, 190, 170),
	}
	yes, no := true, false
	want := []struct {
		what  string
		value float64
		meets *bool
	}{
		{"python resume p50 (idle) / cold session to its state p50", 280.0 / 3000, &yes},
		{"python resume p50 (idle) / bare cold session start p50", 280.0 / 450, nil},
		{"python resume p50 (idle)", 280, &no},
		{"python pause p50 (idle)", 210, nil},
		{"python first cell after resume p50 (idle)", 4, nil},
		{"python resume p50 (busy neighbour) / cold session to its state p50", 420.0 / 3000, &yes},
		{"python resume p50 (busy neighbour) / bare cold session start p50", 420.0 / 450, nil},
		{"python resume p50 (busy neighbour)", 420, &no},
		{"python resume p50, busy neighbour / idle", 1.5, nil},
		{"node resume p50 (idle)", 170, &yes},
	}
	got := hibernateHeadlines(rows)
	if len(got) != len(want) {
		t.Fatalf("%d headlines, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.What != w.what || g.Value < w.value-1e-9 || g.Value > w.value+1e-9 {
			t.Errorf("headline %d: %q %v, want %q %v", i, g.What, g.Value, w.what, w.value)
		}
		switch {
		case w.meets == nil && g.Meets != nil:
			t.Errorf("%q has a target, want none", g.What)
		case w.meets != nil && (g.Meets == nil || *g.Meets != *w.meets):
			t.Errorf("%q meets %v, want %v", g.What, g.Meets, *w.meets)
		}
	}
	if h := hibernateHeadlines(nil); len(h) != 0 {
		t.Errorf("headlines from no rows: %v", h)
	}
}

func TestCapacity(t *testing.T) {
	c := Capacity{
		Template: "python", Sessions: 4,
		Live:     []MemSample{{Usage: 80 << 20}, {Usage: 90 << 20}, {Usage: 70 << 20}, {Usage: 80 << 20}},
		MemTotal: 24 << 30, AvailBefore: 20 << 30, AvailLive: 20<<30 - 400<<20, AvailHibernated: 20<<30 - 8<<20,
		ImageBytes: []int64{64 << 20, 64 << 20, 60 << 20, 68 << 20},
		DirBytes:   260 << 20, DiskFree: 65 << 30, BudgetBytes: 20 << 30,
		MaxSessions: 6, MoreCreated: 2,
	}
	for _, f := range []struct {
		name      string
		got, want float64
	}{
		{"live MiB", c.LiveMiB(), 80},
		{"host MiB per live session", c.HostLiveMiB(), 100},
		{"host MiB per hibernated session", c.HostHibernatedMiB(), 2},
		{"disk MiB per hibernated session", c.DiskMiB(), 65},
	} {
		if f.got != f.want {
			t.Errorf("%s = %v, want %v", f.name, f.got, f.want)
		}
	}
	// 24 GiB / 80 MiB = 307.2; 65 GiB / 65 MiB = 1024; 20 GiB / 64 MiB = 320.
	if got := c.LiveCeiling(); got != 307 {
		t.Errorf("live ceiling %d, want 307", got)
	}
	if got := c.DiskCeiling(); got != 1024 {
		t.Errorf("disk ceiling %d, want 1024", got)
	}
	if got := c.BudgetCeiling(); got != 320 {
		t.Errorf("budget ceiling %d, want 320", got)
	}
	if !c.CountsHibernated() {
		t.Error("2 more of 6 with 4 hibernated: they count")
	}
	c.MoreCreated = 6
	if c.CountsHibernated() {
		t.Error("6 more of 6 with 4 hibernated: they do not count")
	}
	var none Capacity
	if none.LiveCeiling() != 0 || none.DiskCeiling() != 0 || none.BudgetCeiling() != 0 || none.DiskMiB() != 0 || none.HostLiveMiB() != 0 {
		t.Error("an empty capacity extrapolates something")
	}
}

func TestPrintHibernation(t *testing.T) {
	hs := []Hibernation{{Template: "node", ImageBytes: []int64{16 << 20, 18 << 20}, DiskBytes: []int64{17 << 20, 17 << 20}, ResumeMS: []float64{170, 150, 210}}}
	caps := []Capacity{{Template: "python", Sessions: 2, Live: []MemSample{{Usage: 80 << 20}, {Usage: 80 << 20}},
		MemTotal: 24 << 30, DirBytes: 128 << 20, DiskFree: 64 << 30, ImageBytes: []int64{64 << 20, 64 << 20},
		MaxSessions: 3, MoreCreated: 1, Refusal: "HTTP 429 too_many_sessions"}}
	var b bytes.Buffer
	PrintHibernation(&b, hs, caps)
	out := b.String()
	for _, want := range []string{
		"node       2                  17.0                17.0        3                 170.0  210.0",
		"python sessions held at once: 2 opened",
		"live only, 24.0 GiB of memory / 80.0 MiB = 307 sessions",
		"hibernated, 64.0 GiB of free disk / 64.0 MiB = 1024 sessions",
		"--max-sessions counts hibernated sessions: with 2 hibernated and --max-sessions=3, 1 more opened, then HTTP 429 too_many_sessions",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
