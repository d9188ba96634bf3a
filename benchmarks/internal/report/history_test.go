package report

import (
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

func TestSumMetric(t *testing.T) {
	samples := []string{
		`paddock_store_written_total{table="runs"} 201`,
		`paddock_store_written_total{table="session_events"} 4`,
		`paddock_store_written_totals 1000`,
		`paddock_store_dropped_total{reason="queue_full"} 0`,
		`paddock_store_dropped_total{reason="write_error"} 3`,
		`paddock_store_queue_length 0`,
		`paddock_store_write_errors_total 2`,
	}
	for _, c := range []struct {
		metric string
		want   float64
	}{
		{"paddock_store_written_total", 205},
		{"paddock_store_dropped_total", 3},
		{"paddock_store_write_errors_total", 2},
		{"paddock_store_pruned_total", 0},
	} {
		if got := SumMetric(samples, c.metric); got != c.want {
			t.Errorf("SumMetric(%s) = %g, want %g", c.metric, got, c.want)
		}
	}
	m := StoreMetrics{Samples: samples}
	if m.Written() != 205 || m.Dropped() != 3 {
		t.Errorf("written %g, dropped %g; want 205, 3", m.Written(), m.Dropped())
	}
}

func TestMergeThroughput(t *testing.T) {
	ms := time.Millisecond
	a := Throughput{Lang: "python", Target: TargetHistoryOn, Concurrency: 4, Elapsed: 10 * time.Second, Runs: 30, Busy: 1,
		Starts: map[string]int{"pool": 20, "restore": 10}, BusyByStatus: map[int]int{503: 1}, Latencies: []time.Duration{ms, 2 * ms}}
	b := Throughput{Lang: "python", Target: TargetHistoryOn, Concurrency: 4, Elapsed: 5 * time.Second, Runs: 15, Errors: 1, FirstError: "boom",
		Starts: map[string]int{"restore": 15}, Latencies: []time.Duration{3 * ms}}
	got := MergeThroughput([]Throughput{a, b})
	if got.Runs != 45 || got.Elapsed != 15*time.Second || got.Busy != 1 || got.Errors != 1 || got.FirstError != "boom" {
		t.Errorf("merged %+v", got)
	}
	if got.Rate() != 3 {
		t.Errorf("rate %g, want 3", got.Rate())
	}
	if got.Starts["pool"] != 20 || got.Starts["restore"] != 25 || got.BusyByStatus[503] != 1 || len(got.Latencies) != 3 {
		t.Errorf("merged starts %v, busy %v, latencies %v", got.Starts, got.BusyByStatus, got.Latencies)
	}
	if got.Target != TargetHistoryOn || got.Concurrency != 4 {
		t.Errorf("labels %q %d", got.Target, got.Concurrency)
	}
	if z := MergeThroughput(nil); z.Runs != 0 || z.Rate() != 0 {
		t.Errorf("merge of nothing: %+v", z)
	}
}

// durations is n samples: ms milliseconds each, the last `slow` of them
// slowMS instead.
func durations(n int, ms, slow, slowMS int) []stats.Sample {
	out := make([]stats.Sample, n)
	for i := range out {
		d := ms
		if i >= n-slow {
			d = slowMS
		}
		out[i] = stats.Sample{D: time.Duration(d) * time.Millisecond, Start: "pool", Counted: true}
	}
	return out
}

func TestHistoryHeadlines(t *testing.T) {
	rows := []stats.Row{
		{Lang: "python", Probe: HistoryProbe, Mode: ModeHistoryOn, Samples: durations(100, 51, 2, 80)},
		{Lang: "python", Probe: HistoryProbe, Mode: ModeHistoryOff, Samples: durations(100, 50, 2, 100)},
	}
	tps := []Throughput{
		{Lang: "python", Target: TargetHistoryOn, Concurrency: 4, Elapsed: 10 * time.Second, Runs: 97, Latencies: []time.Duration{300 * time.Millisecond}},
		{Lang: "python", Target: TargetHistoryOff, Concurrency: 4, Elapsed: 10 * time.Second, Runs: 100, Latencies: []time.Duration{200 * time.Millisecond}},
	}
	got := historyHeadlines(rows, tps)
	want := []struct {
		what  string
		value float64
		meets *bool
	}{
		{"history on p50 / history off p50", 1.02, ptr(true)},
		{"history on p99 / history off p99", 0.8, ptr(true)},
		{"throughput at 4 clients: history on / history off", 0.97, ptr(false)},
		{"latency p99 at 4 clients: history on / history off", 1.5, nil},
	}
	if len(got) != len(want) {
		t.Fatalf("%d headlines, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		h := got[i]
		if !strings.Contains(h.What, w.what) || h.Value < w.value-1e-9 || h.Value > w.value+1e-9 {
			t.Errorf("headline %d = %q %g, want …%s… %g", i, h.What, h.Value, w.what, w.value)
		}
		if (h.Meets == nil) != (w.meets == nil) || (h.Meets != nil && *h.Meets != *w.meets) {
			t.Errorf("headline %q meets %v, want %v", h.What, h.Meets, w.meets)
		}
	}
	// Below 100 samples there is no p99 to compare; without the off
	// side, nothing.
	rows[0].Samples, rows[1].Samples = rows[0].Samples[:50], rows[1].Samples[:50]
	if got := historyHeadlines(rows, nil); len(got) != 1 {
		t.Errorf("50 samples, no loops: %d headlines, want 1 (p50): %v", len(got), got)
	}
	if got := historyHeadlines(rows[:1], tps[:1]); len(got) != 0 {
		t.Errorf("history on only: %v, want none", got)
	}
}

func TestStoreHeadlines(t *testing.T) {
	ms := []StoreMetrics{
		{Server: "history on", History: true, Samples: []string{`paddock_store_dropped_total{reason="queue_full"} 2`}},
		{Server: "history off"},
	}
	got := storeHeadlines(ms)
	if len(got) != 1 || got[0].Value != 2 || got[0].Meets == nil || *got[0].Meets {
		t.Errorf("storeHeadlines = %+v, want one, 2 dropped, missing its target", got)
	}
	var b strings.Builder
	PrintStore(&b, ms)
	for _, s := range []string{"history on: 0 runs sent, store written 0, dropped 2", "history off: 0 runs sent, no paddock_store_* metrics"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("PrintStore wrote %q, missing %q", b.String(), s)
		}
	}
}

func ptr(b bool) *bool { return &b }
