package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/langs"
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// Report is everything one bench run measured.
type Report struct {
	Rows       []stats.Row
	Throughput []Throughput
	Memory     []MemRow
	// Doors are door operations beside the same operation on /v1.
	Doors []DoorRow
	// MemoryNote says why memory was not measured, if it was not.
	MemoryNote string
	// ServerMetrics are each server's paddock_pool_* samples at its end.
	ServerMetrics map[string][]string
	// Steady are the steady-state phase's points.
	Steady []SteadyPoint
	// NativeRSS is each template's interpreter's memory outside gVisor:
	// the memory target of a warmed template is built on it.
	NativeRSS []NativeRSS
	// Store are the history phase's servers' paddock_store_* counters.
	Store []StoreMetrics
	// Hibernation and Capacity are the hibernation phase's image sizes
	// and server resume times, and its sessions held at once.
	Hibernation []Hibernation
	Capacity    []Capacity
	// SessionTail are the session tail phase's binaries and rounds.
	SessionTail []SessionTail
	// Egress is the egress phase's downloads (egress.go); nil without it.
	Egress *Egress
	// Gateway is the gateway phase's measurements (gateway.go); nil
	// without it.
	Gateway *Gateway
}

// Print writes the tables and the headline ratios.
func (rep Report) Print(w io.Writer) {
	fmt.Fprintln(w, "\n== time to first result (HTTP end to end for Paddock rows) ==")
	printLatency(w, rep.Rows)
	fmt.Fprintln(w, "p99 is printed from 100 samples on; below that the column holds the maximum, marked \"max\".")
	if len(rep.Throughput) > 0 {
		fmt.Fprintln(w, "\n== sustained one-shot throughput, a fresh sandbox per run ==")
		printThroughput(w, rep.Throughput)
	}
	if len(rep.Doors) > 0 {
		fmt.Fprintln(w, "\n== doors: the same operation through a door and on /v1, alternating on one server ==")
		printDoors(w, rep.Doors)
	}
	fmt.Fprintln(w, "\n== host memory per idle pooled sandbox (memory cgroup), by how each sandbox was made ==")
	if rep.MemoryNote != "" {
		fmt.Fprintln(w, rep.MemoryNote)
	}
	printMemory(w, rep.Memory, rep.NativeRSS)
	printNativeRSS(w, rep.NativeRSS)
	if len(rep.Store) > 0 {
		fmt.Fprintln(w, "\n== the history store's own counters (history on against off) ==")
		PrintStore(w, rep.Store)
	}
	if len(rep.Hibernation) > 0 || len(rep.Capacity) > 0 {
		fmt.Fprintln(w, "\n== session hibernation: disk per image, server resume time, sessions one machine holds ==")
		PrintHibernation(w, rep.Hibernation, rep.Capacity)
	}
	if rep.Egress != nil {
		fmt.Fprintln(w, "\n== egress: a download from a stand-in internet, from the host and from a networked sandbox ==")
		PrintEgress(w, *rep.Egress)
	}
	if rep.Gateway != nil {
		fmt.Fprintln(w, "\n== gateway: one gateway over local nodes against one node alone, in turns ==")
		PrintGateway(w, *rep.Gateway)
	}
	fmt.Fprintln(w, "\n== headline (targets from docs/architecture.md; ratios against the template's own interpreter, unsandboxed) ==")
	for _, h := range rep.headlines() {
		fmt.Fprintln(w, h)
	}
}

// headlines are every headline of the run, in the order they print.
func (rep Report) headlines() []headline {
	out := append(headlines(rep.Rows, rep.Throughput, rep.Memory, rep.NativeRSS), storeHeadlines(rep.Store)...)
	out = append(out, tailHeadlines(rep.SessionTail)...)
	if rep.Egress != nil {
		out = append(out, egressHeadlines(*rep.Egress, rep.Rows)...)
	}
	if rep.Gateway != nil {
		out = append(out, gatewayHeadlines(*rep.Gateway)...)
	}
	return out
}

// printLatency prints each row's p50 and upper end and its p50 as a
// multiple of the same language and probe's native rootfs, cold and raw
// runsc p50s.
func printLatency(w io.Writer, rows []stats.Row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "lang\tprobe\tmode\tn\tp50 ms\tp99 ms\tserver start p50 ms\t/ native rootfs\t/ cold\t/ raw run\t/ raw restore\toff-mode runs\tnote\t")
	vs := func(r stats.Row, mode string) string {
		if r.Mode == mode {
			return "-"
		}
		b, ok := stats.FindRow(rows, r.Lang, r.Probe, mode)
		if !ok {
			return "-"
		}
		if v, ok := stats.Ratio(r.P50(), b.P50()); ok {
			return fmt.Sprintf("%.3f", v)
		}
		return "-"
	}
	for _, r := range rows {
		c := r.Counted()
		start := "-"
		if v := r.ServerStartP50(); v >= 0 {
			start = fmt.Sprintf("%.2f", v)
		}
		miss := "-"
		if r.Mismatches > 0 {
			miss = fmt.Sprintf("%d (%s)", r.Mismatches, offModeKinds(r))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Lang, r.Probe, r.Mode, len(c), stats.FormatP50(c), stats.FormatUpper(c), start,
			vs(r, stats.ModeNative), vs(r, stats.ModeCold), vs(r, stats.ModeRaw), vs(r, stats.ModeRawRestore), miss, rowNote(r))
	}
	tw.Flush()
}

// rowNote is r's note, with what its samples hold that the columns don't:
// how the busy regime's sandboxes were started, and the delete inside a
// raw runsc time.
func rowNote(r stats.Row) string {
	var parts []string
	if r.Note != "" {
		parts = append(parts, r.Note)
	}
	if r.Mode == stats.ModeBusy && len(r.Samples) > 0 {
		parts = append(parts, "starts "+startKinds(r.Samples))
	}
	var del []time.Duration
	for _, s := range r.Samples {
		if s.Counted && s.Delete > 0 {
			del = append(del, s.Delete)
		}
	}
	if len(del) > 0 {
		parts = append(parts, "incl. runsc delete p50 "+stats.FormatMS(stats.Percentile(del, 0.5))+" ms")
	}
	return strings.Join(parts, "; ")
}

// startKinds counts the start kinds of samples: "pool×30 restore×10".
func startKinds(samples []stats.Sample) string {
	kinds := map[string]int{}
	for _, s := range samples {
		kinds[s.Start]++
	}
	return stats.CountList(kinds)
}

// offModeKinds lists the start kinds of r's uncounted samples.
func offModeKinds(r stats.Row) string {
	var off []stats.Sample
	for _, s := range r.Samples {
		if !s.Counted {
			off = append(off, s)
		}
	}
	return startKinds(off)
}

func printThroughput(w io.Writer, tps []Throughput) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "lang\twhat\tconcurrency\tseconds\truns\truns/s\tlatency p50 ms\tp99 ms\tbusy answers\tstart kinds\tsandboxes made meanwhile\t")
	for _, t := range tps {
		kinds, made := "-", "-"
		if len(t.Starts) > 0 {
			kinds = stats.CountList(t.Starts)
		}
		if len(t.Made) > 0 {
			made = stats.CountList(t.Made)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%d\t%.2f\t%s\t%s\t%d\t%s\t%s\t\n", t.Lang, t.Target, t.Concurrency, t.Elapsed.Seconds(),
			t.Runs, t.Rate(), stats.FormatP50(t.Latencies), stats.FormatUpper(t.Latencies), t.Busy, kinds, made)
	}
	tw.Flush()
}

// printMemory writes the idle memory rows, each beside its template's
// native RSS (where measured) and its target (see memTarget).
func printMemory(w io.Writer, mems []MemRow, natives []NativeRSS) {
	if len(mems) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "template\tmade by\tserver\tsandboxes\tusage MiB/sandbox\trss MiB/sandbox\tof which Sentry anon\tgofer anon\tshmem MiB/sandbox\tnative RSS MiB\ttarget MiB\tnote\t")
	for _, m := range mems {
		native, target := "-", "-"
		for _, n := range natives {
			if n.Template == m.Lang && len(n.Samples) > 0 {
				native = fmt.Sprintf("%.1f", n.VmRSSMB())
			}
		}
		if v, basis, ok := templateMemTarget(m.Lang, natives); ok {
			target = fmt.Sprintf("≤ %.1f (%s)", v, basis)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%s\t%s\t%s\t\n", m.Lang, m.Start, m.Server, len(m.Samples),
			m.MeanMB(func(s MemSample) uint64 { return s.Usage }),
			m.MeanMB(func(s MemSample) uint64 { return s.RSS }),
			m.MeanMB(func(s MemSample) uint64 { return s.SentryAnon }),
			m.MeanMB(func(s MemSample) uint64 { return s.GoferAnon }),
			m.MeanMB(func(s MemSample) uint64 { return s.Shmem }), native, target, m.Note)
	}
	tw.Flush()
}

// SortRows orders rows by language, then probe, then mode from the
// slowest baseline to the warmest path; sessions come last.
func SortRows(rows []stats.Row) {
	modes := []string{stats.ModeNative, stats.ModeHost, stats.ModeRaw, stats.ModeRawRestore, stats.ModeCold, stats.ModeRestore, stats.ModePool, ModeHistoryOff, ModeHistoryOn, stats.ModeBusy, stats.ModeRuncCold, stats.ModeRuncPool,
		stats.ModeSession, stats.ModeRuncSession}
	langIdx := func(name string) int {
		return slices.IndexFunc(langs.All, func(l langs.Lang) bool { return l.Name == name })
	}
	probeIdx := func(r stats.Row) int {
		l, ok := langs.ByName(r.Lang)
		if !ok {
			return 0
		}
		if i := slices.IndexFunc(l.Probes, func(p langs.Probe) bool { return p.Name == r.Probe }); i >= 0 {
			return i
		}
		return len(l.Probes)
	}
	slices.SortStableFunc(rows, func(a, b stats.Row) int {
		if isSession(a.Mode) || isSession(b.Mode) {
			if d := boolIdx(isSession(a.Mode)) - boolIdx(isSession(b.Mode)); d != 0 {
				return d
			}
		}
		if d := langIdx(a.Lang) - langIdx(b.Lang); d != 0 {
			return d
		}
		if d := probeIdx(a) - probeIdx(b); d != 0 {
			return d
		}
		return slices.Index(modes, a.Mode) - slices.Index(modes, b.Mode)
	})
}

func isSession(mode string) bool { return mode == stats.ModeSession || mode == stats.ModeRuncSession }

func boolIdx(b bool) int {
	if b {
		return 1
	}
	return 0
}
