package report

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// Network on purpose (issue 31): a download from a stand-in internet in a
// network namespace of the bench's own, fetched by the same Python client
// from the host and from inside a networked sandbox, through its egress
// proxy and straight to a listener in the runtime's egress namespace; and
// the start of a networked one-shot against the same run without one.
const (
	// The paths a download takes.
	EgressHost    = "host"                       // a process in the host's namespace, straight to the stand-in
	EgressConnect = "sandbox, proxy CONNECT"     // the sandbox, a CONNECT tunnel through its proxy (the HTTPS path)
	EgressForward = "sandbox, proxy plain HTTP"  // the sandbox, an absolute-form GET through its proxy
	EgressDirect  = "sandbox, direct (no proxy)" // the sandbox, straight to a listener in the egress namespace

	// The start rows: print(1) on the egress phase's server.
	ProbeEgressStart = "print(1), egress phase"
	ModeNetworked    = "networked (no pool, own proxy)"
	ModeNoNetwork    = "no network (no pool: restored)"
	ModeOwnLimits    = "own limits, no network (no pool: booted)"

	// egressThroughputAim is the aim: a download through the
	// proxy at 0.9 of the host's throughput or more.
	egressThroughputAim = 0.9
)

// EgressPaths are the download paths in the order they print.
var EgressPaths = []string{EgressHost, EgressConnect, EgressForward, EgressDirect}

// EgressFetch is one download: its size, the time from the connect to
// the answer's first byte and to its last, as the client timed them.
type EgressFetch struct {
	Path  string `json:"path"`
	Round int    `json:"round"`
	Bytes int64  `json:"bytes"`
	// FirstByte runs from before the connect (the proxy's CONNECT answer
	// included) to the first byte of the HTTP answer; Total to its last.
	FirstByte time.Duration `json:"first_byte_ns"`
	Total     time.Duration `json:"total_ns"`
	// Counted is false for each client process's first fetch, which pays
	// its first-use costs.
	Counted bool `json:"counted"`
}

// MiBps is the fetch's throughput over its whole time, connect included.
func (f EgressFetch) MiBps() float64 {
	if f.Total <= 0 {
		return 0
	}
	return float64(f.Bytes) / MiB / f.Total.Seconds()
}

// Egress is the egress phase's downloads.
type Egress struct {
	// RateMB is the server's --egress-rate-mb, set far above what is
	// measured so that the proxy's rate bucket is not the limit.
	RateMB  int64         `json:"egress_rate_mb"`
	Sizes   []int64       `json:"sizes"`
	Fetches []EgressFetch `json:"fetches"`
	// ProxyBytesIn is the bytes each proxied run's proxy read from the
	// stand-in (the answers' network.bytes_in), DirectBytesIn the same
	// for the direct runs (0: their bytes did not cross the proxy).
	ProxyBytesIn  []int64 `json:"proxy_bytes_in"`
	DirectBytesIn []int64 `json:"direct_bytes_in"`
}

// counted are the counted fetches of path and size.
func (e Egress) counted(path string, size int64) []EgressFetch {
	var out []EgressFetch
	for _, f := range e.Fetches {
		if f.Counted && f.Path == path && f.Bytes == size {
			out = append(out, f)
		}
	}
	return out
}

// Throughput is the median MiB/s of path's counted fetches of size; 0
// without any.
func (e Egress) Throughput(path string, size int64) float64 {
	var v []float64
	for _, f := range e.counted(path, size) {
		v = append(v, f.MiBps())
	}
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[(len(v)-1)/2]
}

// FirstBytes are the first-byte times of path's counted fetches of size.
func (e Egress) FirstBytes(path string, size int64) []time.Duration {
	var out []time.Duration
	for _, f := range e.counted(path, size) {
		out = append(out, f.FirstByte)
	}
	return out
}

// PrintEgress writes the downloads' table: per path and size, the
// throughput and first-byte times, each against the host's.
func PrintEgress(w io.Writer, e Egress) {
	fmt.Fprintf(w, "--egress-rate-mb=%d on the server: its rate bucket is far above what is measured, not the limit\n", e.RateMB)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "path\tsize\tn\tMiB/s p50\t/ host\tfirst byte p50 ms\tp99 ms\t/ host\t")
	for _, size := range e.Sizes {
		host := e.Throughput(EgressHost, size)
		hostFirst := stats.Percentile(e.FirstBytes(EgressHost, size), 0.5)
		for _, path := range EgressPaths {
			fb := e.FirstBytes(path, size)
			if len(fb) == 0 {
				continue
			}
			tp, first := e.Throughput(path, size), stats.Percentile(fb, 0.5)
			vsTP, vsFirst := "-", "-"
			if path != EgressHost && host > 0 {
				vsTP = fmt.Sprintf("%.3f", tp/host)
			}
			if v, ok := stats.Ratio(first, hostFirst); ok && path != EgressHost {
				vsFirst = fmt.Sprintf("%.2f", v)
			}
			label, upper := stats.Upper(fb)
			fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%s\t%.2f\t%.2f %s\t%s\t\n", path, EgressSizeLabel(size), len(fb), tp, vsTP,
				stats.MS(first), stats.MS(upper), label, vsFirst)
		}
	}
	tw.Flush()
	if len(e.ProxyBytesIn) > 0 || len(e.DirectBytesIn) > 0 {
		fmt.Fprintf(w, "bytes the proxy read from the stand-in, per proxied run %v, per direct run %v\n", e.ProxyBytesIn, e.DirectBytesIn)
	}
}

// EgressSizeLabel is a download size in KiB or MiB.
func EgressSizeLabel(n int64) string {
	if n >= MiB && n%MiB == 0 {
		return fmt.Sprintf("%d MiB", n/MiB)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

// egressHeadlines are, for the largest download, the proxy's throughput
// against the host's (the aim: 0.9 or more); for the others the same
// untargeted; where the sandbox's own netstack and the proxy each take
// their share (direct ÷ host, proxy ÷ direct); the first byte through the
// proxy against the host's; and the networked one-shot's start against
// the same run without a network.
func egressHeadlines(e Egress, rows []stats.Row) []headline {
	var out []headline
	largest := slices.Max(append([]int64{0}, e.Sizes...))
	for _, size := range e.Sizes {
		host := e.Throughput(EgressHost, size)
		if host <= 0 {
			continue
		}
		sz := EgressSizeLabel(size)
		for _, path := range []string{EgressConnect, EgressForward} {
			tp := e.Throughput(path, size)
			if tp <= 0 {
				continue
			}
			what := fmt.Sprintf("egress %s download, %s / host throughput", sz, path)
			if size == largest {
				out = append(out, newHeadline(what, tp/host, "x", false, egressThroughputAim))
			} else {
				out = append(out, untargeted(what, tp/host, "x"))
			}
			if d := e.Throughput(EgressDirect, size); d > 0 {
				out = append(out, untargeted(fmt.Sprintf("egress %s download, %s / sandbox direct throughput", sz, path), tp/d, "x"))
			}
		}
		if d := e.Throughput(EgressDirect, size); d > 0 {
			out = append(out, untargeted(fmt.Sprintf("egress %s download, sandbox direct / host throughput (gVisor's netstack)", sz), d/host, "x"))
		}
		hostFirst := stats.Percentile(e.FirstBytes(EgressHost, size), 0.5)
		if fb := e.FirstBytes(EgressConnect, size); len(fb) > 0 {
			if v, ok := stats.Ratio(stats.Percentile(fb, 0.5), hostFirst); ok {
				out = append(out, untargeted(fmt.Sprintf("egress %s first byte p50, %s / host", sz, EgressConnect), v, "x"))
			}
		}
	}
	return append(out, egressStartHeadlines(rows)...)
}

// egressStartHeadlines are the networked one-shot's p50 and upper end
// against the run without a network that starts the same way as most of
// the networked ones did: restored from the snapshot, or booted (the
// own-limits run).
func egressStartHeadlines(rows []stats.Row) []headline {
	net, ok := stats.FindRow(rows, "python", ProbeEgressStart, ModeNetworked)
	if !ok {
		return nil
	}
	kinds := map[string]int{}
	for _, smp := range net.Samples {
		if smp.Counted {
			kinds[smp.Start]++
		}
	}
	baseMode, base := ModeNoNetwork, "restored"
	if kinds["cold"] > kinds["restore"] {
		baseMode, base = ModeOwnLimits, "booted"
	}
	b, ok := stats.FindRow(rows, "python", ProbeEgressStart, baseMode)
	if !ok {
		return nil
	}
	nc, bc := net.Counted(), b.Counted()
	// The upper end is the p99 from 100 samples each on, else the
	// maximum, as the latency table prints it.
	upper, q := "max", 1.0
	if len(nc) >= 100 && len(bc) >= 100 {
		upper, q = "p99", 0.99
	}
	var out []headline
	for _, p := range []struct {
		name string
		a, b time.Duration
	}{{"p50", stats.Percentile(nc, 0.5), stats.Percentile(bc, 0.5)}, {upper, stats.Percentile(nc, q), stats.Percentile(bc, q)}} {
		if v, ok := stats.Ratio(p.a, p.b); ok {
			out = append(out,
				untargeted(fmt.Sprintf("python networked one-shot %s / the same without a network (%s, no pool)", p.name, base), v, "x"),
				untargeted(fmt.Sprintf("python networked one-shot %s - the same without a network (%s, no pool)", p.name, base), stats.MS(p.a-p.b), "ms"))
		}
	}
	return out
}
