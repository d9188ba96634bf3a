package sessions

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// p99Ratio is the loaded p99 over the idle p99 (0 without idle cells).
func p99Ratio(idle, loaded []time.Duration) float64 {
	i99 := stats.Percentile(idle, 0.99)
	if i99 <= 0 {
		return 0
	}
	return float64(stats.Percentile(loaded, 0.99)) / float64(i99)
}

// rateRatio is the one-shot rate with the busy session over the rate
// without, each pooled over its windows (0 when nothing ran without).
func rateRatio(r oneShotRates) float64 {
	without := pooledRate(r.without)
	if without <= 0 {
		return 0
	}
	return pooledRate(r.with) / without
}

// p50p99 is "p50 / p99" of ds in milliseconds.
func p50p99(ds []time.Duration) string {
	return fmt.Sprintf("%.0f / %.0f", stats.MS(stats.Percentile(ds, 0.5)), stats.MS(stats.Percentile(ds, 0.99)))
}

// windowRates lists each window's runs per second.
func windowRates(ts []report.Throughput) string {
	var out []string
	for _, t := range ts {
		out = append(out, fmt.Sprintf("%.2f", t.Rate()))
	}
	return strings.Join(out, ", ")
}

// summary is one binary's result against the aims.
func summary(r tailResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: loaded p99 ÷ idle p99", r.binary)
	for _, l := range r.loaded {
		fmt.Fprintf(&b, ", %d clients %.1f", l.clients, p99Ratio(r.idle, l.cells))
	}
	fmt.Fprintf(&b, " (aim ≤ %.0f at %d)", report.TailAimRatio, report.TailAimClients)
	if len(r.oneShots) > 0 {
		b.WriteString("; one-shots/s with a busy session ÷ without")
		for _, t := range r.oneShots {
			fmt.Fprintf(&b, ", %d clients %.2f", t.clients, rateRatio(t))
		}
		fmt.Fprintf(&b, " (aim ≥ %.2f)", report.RateAim)
	}
	return b.String()
}

// reportOf is r as the run's report keeps it.
func reportOf(r tailResult) report.SessionTail {
	cells := func(clients int, ds []time.Duration) report.TailCells {
		return report.TailCells{Clients: clients, N: len(ds),
			P50MS: stats.MS(stats.Percentile(ds, 0.5)), P99MS: stats.MS(stats.Percentile(ds, 0.99))}
	}
	out := report.SessionTail{Binary: r.binary, Idle: cells(0, r.idle)}
	for _, l := range r.loaded {
		out.Loaded = append(out.Loaded, cells(l.clients, l.cells))
	}
	for _, t := range r.oneShots {
		out.OneShots = append(out.OneShots, report.TailRate{Clients: t.clients, WithoutRate: pooledRate(t.without), WithRate: pooledRate(t.with)})
	}
	return out
}

// printTail writes the phase's two tables and its summary lines.
func printTail(w io.Writer, o bench.Options, res []tailResult, loadAvg string) error {
	fmt.Fprintf(w, "\nSession tail: python `x + 1` over HTTP, %d cells per condition: idle, then while each of %v clients streams one-shot print(1); load average %s\n", o.TailN, o.TailClients, loadAvg)
	if len(o.TailServe) > 0 {
		fmt.Fprintf(w, "servers started with %s\n", strings.Join(o.TailServe, " "))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "binary\tclients\tp50 ms\tp99 ms\tp99 ÷ idle p99\tthrottled/periods\tcells took s\tone-shots/s\trefused\trun-queue wait µs/cell: kernel, server\t")
	for _, r := range res {
		fmt.Fprintf(tw, "%s\tidle\t%.2f\t%.2f\t\t%d/%d\t\t\t\t%.0f, %.0f\t\n", r.binary,
			stats.MS(stats.Percentile(r.idle, 0.5)), stats.MS(stats.Percentile(r.idle, 0.99)),
			r.idleCPU.throttled, r.idleCPU.periods, perCell(r.idleWait, len(r.idle)), perCell(r.idleSrvWait, len(r.idle)))
		for _, l := range r.loaded {
			fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.2f\t%.1f\t%d/%d\t%.1f\t%.2f\t%d\t%.0f, %.0f\t\n", r.binary, l.clients,
				stats.MS(stats.Percentile(l.cells, 0.5)), stats.MS(stats.Percentile(l.cells, 0.99)), p99Ratio(r.idle, l.cells),
				l.cpu.throttled, l.cpu.periods, l.took.Seconds(), float64(l.oneShots)/l.took.Seconds(), l.refused,
				perCell(l.wait, len(l.cells)), perCell(l.serverWait, len(l.cells)))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range res {
		fmt.Fprintf(w, "%s: the kernel's cpu.shares %s, cfs_burst_us %s, CPUs %s\n", r.binary, r.kernelShares, r.kBurst, r.kernelCPUs)
	}
	// The loaded cells take about as long as the one-shots beside them:
	// a window of a few seconds holds a handful of runs, too few for a
	// rate; the one-shot table below counts them over fixed windows.
	fmt.Fprintln(w, "cells took: how long the loaded cells took; one-shots/s: runs that ended meanwhile; refused: 429/503 answers to the streaming clients; run-queue wait: time the threads of the session's sandbox (Sentry, gofer, stubs) and of the server spent runnable but waiting for a CPU (/proc/<tid>/schedstat), summed over threads, per cell")
	if measuresOneShots(o) {
		fmt.Fprintf(w, "\nOne-shot print(1) rate, %d windows of %s per condition in turns, each from a full pool: a second python session open and idle (without), or running a %s CPU loop cell after cell (with)\n", o.TailTurns, o.TailWindow, busyCellFor)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "binary\tclients\twithout runs/s\tper window\twith runs/s\tper window\twith ÷ without\tbusy cells/s\trun p50 / p99 ms without\twith\trefused without, with\tstarts without; with\t")
		for _, r := range res {
			for _, t := range r.oneShots {
				busyRate := 0.0
				if t.busyFor > 0 {
					busyRate = float64(t.busyCells) / t.busyFor.Seconds()
				}
				fmt.Fprintf(tw, "%s\t%d\t%.2f\t%s\t%.2f\t%s\t%.2f\t%.2f\t%s\t%s\t%d, %d\t%s; %s\t\n", r.binary, t.clients,
					pooledRate(t.without), windowRates(t.without), pooledRate(t.with), windowRates(t.with), rateRatio(t),
					busyRate, p50p99(latencies(t.without)), p50p99(latencies(t.with)), refusedIn(t.without), refusedIn(t.with), startsIn(t.without), startsIn(t.with))
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, r := range res {
		if _, err := fmt.Fprintln(w, summary(r)); err != nil {
			return err
		}
	}
	return nil
}
