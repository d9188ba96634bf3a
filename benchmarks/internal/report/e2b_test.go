package report

import (
	"testing"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

func TestE2BHeadlines(t *testing.T) {
	ms := func(v ...float64) []stats.Sample {
		var out []stats.Sample
		for _, x := range v {
			out = append(out, stats.Sample{D: time.Duration(x * float64(time.Millisecond)), Counted: true})
		}
		return out
	}
	rows := []stats.Row{
		{Lang: "python", Probe: stats.ProbeE2BFirst, Mode: stats.ModeE2B, Samples: ms(110, 220, 99)},
		{Lang: "python", Probe: stats.ProbeE2BFirst, Mode: stats.ModeREST, Samples: ms(100, 200, 100)},
	}
	got := e2bHeadlines(rows)
	if len(got) != 2 {
		t.Fatalf("headlines %+v", got)
	}
	if got[0].Value != 1.1 || !got[0].AtMost || got[0].Target != 1.05 || *got[0].Meets {
		t.Fatalf("p50 ratio %+v, want 1.1 (110/100), missing ≤ 1.05", got[0])
	}
	if got[1].Value != 1.1 || got[1].Meets != nil {
		t.Fatalf("paired %+v, want the median of 1.1, 1.1, 0.99", got[1])
	}
	if got := e2bHeadlines(rows[:1]); got != nil {
		t.Fatalf("one row: %+v", got)
	}
}
