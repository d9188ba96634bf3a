package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// report is everything one bench run measured.
type report struct {
	Rows       []row
	Throughput []throughput
	Memory     []memRow
	// MemoryNote says why memory was not measured, if it was not.
	MemoryNote string
	// ServerMetrics are each server's paddock_pool_* samples at its end.
	ServerMetrics map[string][]string
}

// print writes the tables and the headline ratios.
func (rep report) print(w io.Writer) {
	fmt.Fprintln(w, "\n== time to first result (HTTP end to end for Paddock rows) ==")
	printLatency(w, rep.Rows)
	if len(rep.Throughput) > 0 {
		fmt.Fprintln(w, "\n== sustained one-shot throughput, a fresh sandbox per run ==")
		printThroughput(w, rep.Throughput)
	}
	fmt.Fprintln(w, "\n== host memory per idle pooled sandbox (memory cgroup) ==")
	if rep.MemoryNote != "" {
		fmt.Fprintln(w, rep.MemoryNote)
	}
	printMemory(w, rep.Memory)
	fmt.Fprintln(w, "\n== headline (targets from docs/architecture.md) ==")
	for _, h := range headlines(rep.Rows, rep.Throughput, rep.Memory) {
		fmt.Fprintln(w, h)
	}
}

func fmtMS(d time.Duration) string { return fmt.Sprintf("%.2f", msOf(d)) }

// printLatency prints each row's p50/p99 and its p50 as a multiple of the
// same language and probe's native, cold and raw runsc p50s.
func printLatency(w io.Writer, rows []row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "lang\tprobe\tmode\tn\tp50 ms\tp99 ms\tserver start p50 ms\t/ native\t/ cold\t/ raw runsc\toff-mode runs\tnote\t")
	vs := func(r row, mode string) string {
		if r.Mode == mode {
			return "-"
		}
		b, ok := findRow(rows, r.Lang, r.Probe, mode)
		if !ok {
			return "-"
		}
		if v, ok := ratio(r.p50(), b.p50()); ok {
			return fmt.Sprintf("%.3f", v)
		}
		return "-"
	}
	for _, r := range rows {
		n := len(r.counted())
		p50, p99, start := "-", "-", "-"
		if n > 0 {
			p50, p99 = fmtMS(r.p50()), fmtMS(r.p99())
		}
		if v := r.serverStartP50(); v >= 0 {
			start = fmt.Sprintf("%.2f", v)
		}
		miss := "-"
		if r.Mismatches > 0 {
			miss = fmt.Sprintf("%d (%s)", r.Mismatches, offModeKinds(r))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Lang, r.Probe, r.Mode, n, p50, p99, start,
			vs(r, modeNative), vs(r, modeCold), vs(r, modeRaw), miss, r.Note)
	}
	tw.Flush()
}

// offModeKinds lists the start kinds of r's uncounted samples.
func offModeKinds(r row) string {
	kinds := map[string]int{}
	for _, s := range r.Samples {
		if !s.Counted {
			kinds[s.Start]++
		}
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		parts = append(parts, fmt.Sprintf("%s×%d", k, kinds[k]))
	}
	return strings.Join(parts, " ")
}

func printThroughput(w io.Writer, tps []throughput) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "lang\twhat\tconcurrency\tseconds\truns\truns/s\tlatency p50 ms\tp99 ms\tbusy answers\tstart kinds\t")
	for _, t := range tps {
		kinds := "-"
		if len(t.Starts) > 0 {
			var parts []string
			for _, k := range slices.Sorted(maps.Keys(t.Starts)) {
				parts = append(parts, fmt.Sprintf("%s×%d", k, t.Starts[k]))
			}
			kinds = strings.Join(parts, " ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%d\t%.2f\t%s\t%s\t%d\t%s\t\n", t.Lang, t.Target, t.Concurrency, t.Elapsed.Seconds(),
			t.Runs, t.rate(), fmtMS(percentile(t.Latencies, 0.5)), fmtMS(percentile(t.Latencies, 0.99)), t.Busy, kinds)
	}
	tw.Flush()
}

func printMemory(w io.Writer, mems []memRow) {
	if len(mems) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "lang\tmade by\tsandboxes\tusage MiB/sandbox\trss MiB/sandbox\tshmem MiB/sandbox\tnote\t")
	for _, m := range mems {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%.1f\t%.1f\t%s\t\n", m.Lang, m.Start, len(m.Samples),
			m.meanMB(func(s memSample) uint64 { return s.Usage }),
			m.meanMB(func(s memSample) uint64 { return s.RSS }),
			m.meanMB(func(s memSample) uint64 { return s.Shmem }), m.Note)
	}
	tw.Flush()
}
