package main

import (
	"context"
	"fmt"
	"time"
)

// busyRow measures warm runs as a busy user sees them: n runs of p one
// after the other at a steady rate, each started interval after the one
// before (or as soon as it ends, when it took longer), on a pool held at
// its floor. Nothing waits for the pool to refill, so refills compete
// with the runs for the CPUs and a run that finds the pool empty starts
// its sandbox on the request path; every run counts, whatever its start.
func (s *server) busyRow(ctx context.Context, l lang, p probe, n int, interval time.Duration) (row, error) {
	r := row{Lang: l.name, Probe: p.name, Mode: modeBusy}
	if err := s.awaitFull(ctx, l.name); err != nil {
		return r, err
	}
	next := time.Now()
	for range n {
		if err := sleep(ctx, time.Until(next)); err != nil {
			return r, err
		}
		next = time.Now().Add(interval)
		resp, d, err := s.runOnce(ctx, l.name, p.code)
		if err != nil {
			return r, err
		}
		if resp.Reason != "ok" || !p.ok(resp.Stdout) {
			return r, fmt.Errorf("%s %s (%s): reason %q, stdout %q, stderr %q", l.name, p.name, modeBusy, resp.Reason, resp.Stdout, resp.Stderr)
		}
		t := resp.Timing
		r.Samples = append(r.Samples, sample{D: d, Start: resp.startKind(), Counted: true, Timing: &t})
	}
	return r, nil
}
