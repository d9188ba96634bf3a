package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// doorRow is one operation through a door beside the same operation on
// /v1, interleaved on one server in the same run: the door's overhead is
// the ratio of their p50s.
type doorRow struct {
	Door, Op, Lang string
	V1, Via        []time.Duration
	// Bare marks a row that does no work past the door (no sandbox): its
	// ratio says nothing about the aim, its difference is the door's cost.
	Bare bool
}

// doorAim is the overhead a door should stay under.
const doorAim = 1.05

func (d doorRow) ratio() (float64, bool) {
	return stats.Ratio(stats.Percentile(d.Via, 0.5), stats.Percentile(d.V1, 0.5))
}

func printDoors(w io.Writer, rows []doorRow) {
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

func jsonDoors(rows []doorRow) []jsonDoor {
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
