package main

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"text/tabwriter"
	"time"
)

type row struct {
	lang, kind string
	s          []time.Duration
	baseline   bool // the native process start
	rawRunsc   bool // the raw `runsc run` start
	cold       bool // compared with rawRunsc as well
}

func nativeSamples(ctx context.Context, l lang, n int) ([]time.Duration, error) {
	var out []time.Duration
	for range n {
		start := time.Now()
		if err := exec.CommandContext(ctx, l.native[0], l.native[1:]...).Run(); err != nil {
			return nil, fmt.Errorf("native %s: %w", l.name, err)
		}
		out = append(out, time.Since(start))
	}
	return out, nil
}

func percentile(s []time.Duration, p float64) time.Duration {
	if len(s) == 0 {
		return 0
	}
	c := slices.Clone(s)
	slices.Sort(c)
	i := int(p*float64(len(c)-1) + 0.5)
	return c[i]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }

// printTable prints each row's p50/p99 and its p50 as a ratio of the same
// language's native baseline p50.
func printTable(w io.Writer, rows []row) {
	base, raw := map[string]time.Duration{}, map[string]time.Duration{}
	for _, r := range rows {
		if r.baseline {
			base[r.lang] = percentile(r.s, 0.5)
		}
		if r.rawRunsc {
			raw[r.lang] = percentile(r.s, 0.5)
		}
	}
	ratio := func(p50, b time.Duration) string {
		if b <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.3f", float64(p50)/float64(b))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "lang\twhat\tn\tp50 ms\tp99 ms\tp50 / native p50\tp50 / raw runsc p50")
	for _, r := range rows {
		p50 := percentile(r.s, 0.5)
		vsRaw := "-"
		if r.cold {
			vsRaw = ratio(p50, raw[r.lang])
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", r.lang, r.kind, len(r.s), ms(p50), ms(percentile(r.s, 0.99)), ratio(p50, base[r.lang]), vsRaw)
	}
	tw.Flush()
}
