package report

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/paddock-dev/paddock/templates"
)

// The idle memory target (docs/architecture.md) depends on the template:
// one that warms nothing up (python-slim, node) holds a bare interpreter
// and the agent, bounded by a fixed figure; one whose warm-up imports a
// stack (python: pandas and friends) holds what that stack holds natively,
// so its bound is its own interpreter's native RSS plus a fixed headroom.
const (
	slimMemTargetMiB  = 25
	warmedHeadroomMiB = 10
)

// memTarget is the bound on a template's idle pooled memory in MiB and a
// phrase saying what it is made of. A warmed template's bound needs its
// native RSS (nil when not measured): without it there is none, and ok is
// false.
func memTarget(warmed bool, native *NativeRSS) (target float64, basis string, ok bool) {
	if !warmed {
		return slimMemTargetMiB, "no warm-up: a fixed bound", true
	}
	if native == nil || len(native.Samples) == 0 {
		return 0, "warmed: native RSS not measured", false
	}
	// Rounded to the 0.1 MiB it is printed with.
	rss := math.Round(native.VmRSSMB()*10) / 10
	return rss + warmedHeadroomMiB, fmt.Sprintf("warmed: native RSS %.1f MiB + %d", rss, warmedHeadroomMiB), true
}

// templateMemTarget is memTarget for the template called name, looking up
// whether it warms up and its native RSS among natives.
func templateMemTarget(name string, natives []NativeRSS) (float64, string, bool) {
	t, err := templates.Get(name)
	if err != nil {
		return 0, "unknown template", false
	}
	var native *NativeRSS
	for i := range natives {
		if natives[i].Template == name {
			native = &natives[i]
		}
	}
	return memTarget(t.Warmup != "", native)
}

// memHeadlines are the idle memory verdicts: each row's mean memory cgroup
// usage against its template's bound.
func memHeadlines(mems []MemRow, natives []NativeRSS) []headline {
	var out []headline
	for _, m := range mems {
		if len(m.Samples) == 0 {
			continue
		}
		usage := m.MeanMB(func(s MemSample) uint64 { return s.Usage })
		target, basis, ok := templateMemTarget(m.Lang, natives)
		what := fmt.Sprintf("%s idle pooled sandbox (made by %s), host memory (%s)", m.Lang, m.Start, basis)
		if !ok {
			out = append(out, untargeted(what, usage, "MiB"))
			continue
		}
		out = append(out, newHeadline(what, usage, "MiB", true, target))
	}
	return out
}

// printNativeRSS writes each template's native RSS samples' means.
func printNativeRSS(w io.Writer, natives []NativeRSS) {
	if len(natives) == 0 {
		return
	}
	fmt.Fprintln(w, "\n== native RSS: each template's interpreter from its root filesystem, no sandbox, idle after its warm-up (/proc/PID/status; peak: the child's ru_maxrss) ==")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "template\tprocesses\tVmRSS MiB\tRssAnon MiB\tRssFile MiB\tRssShmem MiB\tpeak MiB\tnote\t")
	for _, n := range natives {
		mb := func(f func(ProcRSSSample) uint64) string { return fmt.Sprintf("%.1f", n.MeanMB(f)) }
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", n.Template, len(n.Samples), fmt.Sprintf("%.1f", n.VmRSSMB()),
			mb(func(s ProcRSSSample) uint64 { return s.RssAnon }), mb(func(s ProcRSSSample) uint64 { return s.RssFile }),
			mb(func(s ProcRSSSample) uint64 { return s.RssShmem }), mb(func(s ProcRSSSample) uint64 { return s.MaxRSS }), n.Note)
	}
	tw.Flush()
}
