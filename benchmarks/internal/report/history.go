package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// The history store's cost on runs: two servers alike but for
// --history-db (the default SQLite file against off), measured in the
// same run, alternating. Issue 28 asks that the history make no run
// slower: on ÷ off within 2%.
const (
	ModeHistoryOn    = "warm pool idle, history on"
	ModeHistoryOff   = "warm pool idle, history off"
	TargetHistoryOn  = "paddock one-shot, history on"
	TargetHistoryOff = "paddock one-shot, history off"
	// GraphQLProbe is the query the phase times on the server with the
	// history on, its document cache warm and cold.
	GraphQLProbe    = "{ runs(first: 50) { items { id at template startKind totalMS reason } next } pools { template ready target hitRate } }"
	ModeGraphQLWarm = "graphql, document cache warm"
	ModeGraphQLCold = "graphql, document cache cold"
	// HistoryProbe is the program the phase runs.
	HistoryProbe = "print(1)"
	// historyAim is how far apart on and off may be: at most 2% slower
	// (and at least 0.98 of the throughput).
	historyAim = 0.02
)

// StoreMetrics are one server's paddock_store_* samples, read at the end
// of the history phase.
type StoreMetrics struct {
	Server  string   `json:"server"`
	History bool     `json:"history"`
	Runs    int      `json:"runs_sent"` // answered runs the bench sent it
	Samples []string `json:"samples"`
}

// Written is the sum of paddock_store_written_total over its tables.
func (m StoreMetrics) Written() float64 { return SumMetric(m.Samples, "paddock_store_written_total") }

// Dropped is the sum of paddock_store_dropped_total over its reasons.
func (m StoreMetrics) Dropped() float64 { return SumMetric(m.Samples, "paddock_store_dropped_total") }

// SumMetric adds up every sample of metric (with any labels, or none) in
// Prometheus text samples; other metrics whose names begin alike are not
// counted.
func SumMetric(samples []string, metric string) float64 {
	sum := 0.0
	for _, line := range samples {
		rest, ok := strings.CutPrefix(line, metric)
		if !ok || rest == "" || (rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		if rest[0] == '{' {
			end := strings.LastIndexByte(rest, '}')
			if end < 0 {
				continue
			}
			rest = rest[end+1:]
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64); err == nil {
			sum += v
		}
	}
	return sum
}

// MergeThroughput joins the segments of one closed loop measured in
// turns into one: their runs, busy answers, errors, times and samples
// add up. The first segment gives the labels.
func MergeThroughput(segs []Throughput) Throughput {
	if len(segs) == 0 {
		return Throughput{}
	}
	out := Throughput{Lang: segs[0].Lang, Target: segs[0].Target, Concurrency: segs[0].Concurrency,
		Starts: map[string]int{}, BusyByStatus: map[int]int{}}
	for _, s := range segs {
		out.Elapsed += s.Elapsed
		out.Runs += s.Runs
		out.Busy += s.Busy
		out.Errors += s.Errors
		out.Starved += s.Starved
		if out.FirstError == "" {
			out.FirstError = s.FirstError
		}
		for k, v := range s.Starts {
			out.Starts[k] += v
		}
		for k, v := range s.BusyByStatus {
			out.BusyByStatus[k] += v
		}
		for k, v := range s.Made {
			if out.Made == nil {
				out.Made = map[string]int{}
			}
			out.Made[k] += v
		}
		out.Latencies = append(out.Latencies, s.Latencies...)
		out.Waited = append(out.Waited, s.Waited...)
		out.Unanswered = append(out.Unanswered, s.Unanswered...)
	}
	return out
}

// historyHeadlines are on ÷ off for the warm print(1)'s p50 and p99 and
// for the closed loop's rate and p99, when both sides were measured.
func historyHeadlines(rows []stats.Row, tps []Throughput) []headline {
	var out []headline
	on, ok1 := stats.FindRow(rows, "python", HistoryProbe, ModeHistoryOn)
	off, ok2 := stats.FindRow(rows, "python", HistoryProbe, ModeHistoryOff)
	if ok1 && ok2 {
		if v, ok := stats.Ratio(on.P50(), off.P50()); ok {
			out = append(out, newHeadline("python warm `print(1)`: history on p50 / history off p50", v, "x", true, 1+historyAim))
		}
		a, b := on.Counted(), off.Counted()
		if la, da := stats.Upper(a); la == "p99" {
			if lb, db := stats.Upper(b); lb == "p99" {
				if v, ok := stats.Ratio(da, db); ok {
					out = append(out, newHeadline("python warm `print(1)`: history on p99 / history off p99", v, "x", true, 1+historyAim))
				}
			}
		}
	}
	warm, ok1 := stats.FindRow(rows, "graphql", GraphQLProbe, ModeGraphQLWarm)
	cold, ok2 := stats.FindRow(rows, "graphql", GraphQLProbe, ModeGraphQLCold)
	if ok1 && ok2 {
		out = append(out, untargeted("graphql 50 runs and the pools: p50, document cache warm", float64(warm.P50().Microseconds())/1000, "ms"),
			untargeted("graphql 50 runs and the pools: p50, document cache cold", float64(cold.P50().Microseconds())/1000, "ms"))
		if v, ok := stats.Ratio(cold.P50(), warm.P50()); ok {
			out = append(out, untargeted("graphql 50 runs and the pools: cache cold p50 / cache warm p50", v, "x"))
		}
	}
	i := slices.IndexFunc(tps, func(t Throughput) bool { return t.Target == TargetHistoryOn })
	j := slices.IndexFunc(tps, func(t Throughput) bool { return t.Target == TargetHistoryOff })
	if i < 0 || j < 0 {
		return out
	}
	ton, toff := tps[i], tps[j]
	if ton.Rate() > 0 && toff.Rate() > 0 {
		out = append(out, newHeadline(fmt.Sprintf("python one-shot throughput at %d clients: history on / history off", ton.Concurrency),
			ton.Rate()/toff.Rate(), "x", false, 1-historyAim))
	}
	if v, ok := stats.Ratio(stats.Percentile(ton.Latencies, 0.99), stats.Percentile(toff.Latencies, 0.99)); ok {
		out = append(out, untargeted(fmt.Sprintf("python one-shot latency p99 at %d clients: history on / history off", ton.Concurrency), v, "x"))
	}
	return out
}

// storeHeadlines say, for the server with the history on, how many
// records it dropped (the target: none).
func storeHeadlines(ms []StoreMetrics) []headline {
	var out []headline
	for _, m := range ms {
		if m.History {
			out = append(out, newHeadline(m.Server+": history records dropped", m.Dropped(), "records", true, 0))
		}
	}
	return out
}

// PrintStore writes each server's store counters beside the runs the
// bench sent it.
func PrintStore(w io.Writer, ms []StoreMetrics) {
	for _, m := range ms {
		if len(m.Samples) == 0 {
			fmt.Fprintf(w, "%s: %d runs sent, no paddock_store_* metrics (no history kept)\n", m.Server, m.Runs)
			continue
		}
		fmt.Fprintf(w, "%s: %d runs sent, store written %.0f, dropped %.0f, write errors %.0f\n", m.Server, m.Runs,
			m.Written(), m.Dropped(), SumMetric(m.Samples, "paddock_store_write_errors_total"))
	}
}
