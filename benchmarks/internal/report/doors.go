package report

import (
	_ "embed"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// DoorRow is one operation through a door beside the same operation on
// /v1, interleaved on one server in the same run: the door's overhead is
// the ratio of their p50s.
type DoorRow struct {
	Door, Op, Lang string
	V1, Via        []time.Duration
	// Bare marks a row that does no work past the door (no sandbox): its
	// ratio says nothing about the aim, its difference is the door's cost.
	Bare bool
}

// doorAim is the overhead a door should stay under.
const doorAim = 1.05

func (d DoorRow) ratio() (float64, bool) {
	return stats.Ratio(stats.Percentile(d.Via, 0.5), stats.Percentile(d.V1, 0.5))
}

func printDoors(w io.Writer, rows []DoorRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "door\toperation\tlang\tn\t/v1 p50 ms\tdoor p50 ms\tdifference ms\tratio")
	for _, d := range rows {
		r := "-"
		if v, ok := d.ratio(); ok {
			r = fmt.Sprintf("%.3f×", v)
			if !d.Bare {
				r += fmt.Sprintf(" (aim ≤ %.2f×)", doorAim)
			}
		}
		diff := fmt.Sprintf("%+.2f", stats.MS(stats.Percentile(d.Via, 0.5)-stats.Percentile(d.V1, 0.5)))
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", d.Door, d.Op, d.Lang, min(len(d.V1), len(d.Via)), stats.FormatP50(d.V1), stats.FormatP50(d.Via), diff, r)
	}
	_ = tw.Flush()
}

type jsonDoor struct {
	Door   string    `json:"door"`
	Op     string    `json:"operation"`
	Lang   string    `json:"lang"`
	V1MS   []float64 `json:"v1_ms"`
	DoorMS []float64 `json:"door_ms"`
	Ratio  float64   `json:"p50_ratio"`
}

func jsonDoors(rows []DoorRow) []jsonDoor {
	out := []jsonDoor{}
	for _, d := range rows {
		j := jsonDoor{Door: d.Door, Op: d.Op, Lang: d.Lang, V1MS: []float64{}, DoorMS: []float64{}}
		for _, v := range d.V1 {
			j.V1MS = append(j.V1MS, stats.MS(v))
		}
		for _, v := range d.Via {
			j.DoorMS = append(j.DoorMS, stats.MS(v))
		}
		j.Ratio, _ = d.ratio()
		out = append(out, j)
	}
	return out
}

// e2bHeadlines is the door's overhead ratio, when both rows have samples,
// and beside it the median of the ratios of each E2B sample to the /v1
// sample next to it in time, which a busy machine's swings disturb less.
func e2bHeadlines(rows []stats.Row) []headline {
	e, _ := stats.FindRow(rows, "python", stats.ProbeE2BFirst, stats.ModeE2B)
	r, _ := stats.FindRow(rows, "python", stats.ProbeE2BFirst, stats.ModeREST)
	v, ok := stats.Ratio(e.P50(), r.P50())
	if !ok {
		return nil
	}
	out := []headline{newHeadline("python E2B create → first result p50 / /v1 create session + execute p50", v, "x", true, 1.05)}
	if m, ok := pairedRatio(e.Counted(), r.Counted()); ok {
		out = append(out, untargeted("python E2B create → first result / /v1, median of paired ratios", m, "x"))
	}
	return out
}

// pairedRatio is the median of a[i]/b[i].
func pairedRatio(a, b []time.Duration) (float64, bool) {
	n := min(len(a), len(b))
	if n == 0 {
		return 0, false
	}
	rs := make([]float64, 0, n)
	for i := range n {
		if b[i] > 0 {
			rs = append(rs, float64(a[i])/float64(b[i]))
		}
	}
	if len(rs) == 0 {
		return 0, false
	}
	slices.Sort(rs)
	if len(rs)%2 == 1 {
		return rs[len(rs)/2], true
	}
	return (rs[len(rs)/2-1] + rs[len(rs)/2]) / 2, true
}

// jupyterHeadlines compares Paddock's cell round trip with the faster of
// the native rows (Nagle off, normally): native p50 / Paddock p50, how
// many times faster the sandboxed stack is (the aim: at least 7).
// The stock native row, when it is not that baseline, is shown beside it
// without a target.
func jupyterHeadlines(rows []stats.Row) []headline {
	p, ok := stats.FindRow(rows, "python", stats.JupyterProbe, stats.ModeJupyterPaddock)
	if !ok {
		return nil
	}
	what := func(mode string) string {
		stack := "native Jupyter Server + ipykernel"
		if mode == stats.ModeJupyterNoDelay {
			stack += " with TCP_NODELAY"
		}
		return fmt.Sprintf("python `%s` Jupyter cell round trip: %s p50 / Paddock p50", stats.JupyterProbe, stack)
	}
	var best stats.Row
	for _, mode := range []string{stats.ModeJupyterNoDelay, stats.ModeJupyterNative} {
		if n, ok := stats.FindRow(rows, "python", stats.JupyterProbe, mode); ok && (best.Mode == "" || n.P50() < best.P50()) {
			best = n
		}
	}
	v, ok := stats.Ratio(best.P50(), p.P50())
	if !ok {
		return nil
	}
	out := []headline{newHeadline(what(best.Mode), v, "x", false, 7)}
	if best.Mode != stats.ModeJupyterNative {
		n, _ := stats.FindRow(rows, "python", stats.JupyterProbe, stats.ModeJupyterNative)
		if v, ok := stats.Ratio(n.P50(), p.P50()); ok {
			out = append(out, untargeted(what(stats.ModeJupyterNative), v, "x"))
		}
	}
	return out
}
