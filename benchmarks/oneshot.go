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

// oneShotRow times runs of p until n of them started the way mode says.
// For the warm pool it waits before each run until the pool is full, so
// the number is the latency of a warm run, not of refilling. Runs that
// started another way are kept but not counted; after 2n+2 attempts it
// gives up and returns what it has. settle is a pause between runs that
// lets the previous sandbox's teardown finish off the measured path.
func oneShotRow(ctx context.Context, s *server.Server, l langs.Lang, p langs.Probe, mode string, n int, settle time.Duration) (stats.Row, error) {
	want := map[string]string{stats.ModePool: "pool", stats.ModeRestore: "restore", stats.ModeCold: "cold", stats.ModeRuncPool: "pool", stats.ModeRuncCold: "cold"}[mode]
	r := stats.Row{Lang: l.Name, Probe: p.Name, Mode: mode}
	for attempt := 0; len(r.Counted()) < n && attempt < 2*n+2; attempt++ {
		if mode == stats.ModePool || mode == stats.ModeRuncPool {
			if err := s.AwaitFull(ctx, l.Name); err != nil {
				return r, err
			}
		} else if err := bench.Sleep(ctx, settle); err != nil {
			return r, err
		}
		resp, d, err := s.RunOnce(ctx, l.Name, p.Code)
		if err != nil {
			return r, err
		}
		if resp.Reason != "ok" || !p.OK(resp.Stdout) {
			return r, fmt.Errorf("%s %s (%s): reason %q, stdout %q, stderr %q", l.Name, p.Name, mode, resp.Reason, resp.Stdout, resp.Stderr)
		}
		kind := resp.StartKind()
		t := resp.Timing
		r.Samples = append(r.Samples, stats.Sample{D: d, Start: kind, Counted: kind == want, Timing: &t})
		if kind != want {
			r.Mismatches++
		}
	}
	return r, nil
}

// awaitRestores runs p until a run is served by a restore, so that the
// measured runs do not race the server's first snapshot build. It fails
// when the snapshot failed or no run was restored within timeout.
func awaitRestores(ctx context.Context, s *server.Server, l langs.Lang, p langs.Probe, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	state, last := "", ""
	for time.Now().Before(deadline) {
		if m, err := s.PoolMetrics(ctx); err == nil {
			if state = server.SnapshotState(m, l.Name); state == "failed" {
				break
			}
		}
		resp, _, err := s.RunOnce(ctx, l.Name, p.Code)
		if err != nil {
			return err
		}
		if last = resp.StartKind(); last == "restore" {
			return nil
		}
		if err := bench.Sleep(ctx, 500*time.Millisecond); err != nil {
			return err
		}
	}
	return fmt.Errorf("no %s run was restored from a snapshot (snapshot state %q, last start %q)", l.Name, state, last)
}
