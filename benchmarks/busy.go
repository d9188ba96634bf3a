package main

import (
	"context"
	"fmt"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/langs"
	"github.com/paddock-dev/paddock/benchmarks/internal/server"
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// busyRow measures warm runs as a busy user sees them: n runs of p one
// after the other at a steady rate, each started interval after the one
// before (or as soon as it ends, when it took longer), on a pool held at
// its floor. Nothing waits for the pool to refill, so refills compete
// with the runs for the CPUs and a run that finds the pool empty starts
// its sandbox on the request path; every run counts, whatever its start.
func busyRow(ctx context.Context, s *server.Server, l langs.Lang, p langs.Probe, n int, interval time.Duration) (stats.Row, error) {
	r := stats.Row{Lang: l.Name, Probe: p.Name, Mode: stats.ModeBusy}
	if err := s.AwaitFull(ctx, l.Name); err != nil {
		return r, err
	}
	next := time.Now()
	for range n {
		if err := bench.Sleep(ctx, time.Until(next)); err != nil {
			return r, err
		}
		next = time.Now().Add(interval)
		resp, d, err := s.RunOnce(ctx, l.Name, p.Code)
		if err != nil {
			return r, err
		}
		if resp.Reason != "ok" || !p.OK(resp.Stdout) {
			return r, fmt.Errorf("%s %s (%s): reason %q, stdout %q, stderr %q", l.Name, p.Name, stats.ModeBusy, resp.Reason, resp.Stdout, resp.Stderr)
		}
		t := resp.Timing
		r.Samples = append(r.Samples, stats.Sample{D: d, Start: resp.StartKind(), Counted: true, Timing: &t})
	}
	return r, nil
}
