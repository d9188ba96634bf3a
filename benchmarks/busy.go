package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/host"
	"github.com/paddock-dev/paddock/benchmarks/internal/langs"
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// busyRow measures warm runs as a busy user sees them: n runs of p one
// after the other at a steady rate, each started interval after the one
// before (or as soon as it ends, when it took longer), on a pool held at
// its floor. Nothing waits for the pool to refill, so refills compete
// with the runs for the CPUs and a run that finds the pool empty starts
// its sandbox on the request path; every run counts, whatever its start.
func (s *server) busyRow(ctx context.Context, l langs.Lang, p langs.Probe, n int, interval time.Duration) (stats.Row, error) {
	r := stats.Row{Lang: l.Name, Probe: p.Name, Mode: stats.ModeBusy}
	if err := s.awaitFull(ctx, l.Name); err != nil {
		return r, err
	}
	next := time.Now()
	for range n {
		if err := bench.Sleep(ctx, time.Until(next)); err != nil {
			return r, err
		}
		next = time.Now().Add(interval)
		resp, d, err := s.runOnce(ctx, l.Name, p.Code)
		if err != nil {
			return r, err
		}
		if resp.Reason != "ok" || !p.OK(resp.Stdout) {
			return r, fmt.Errorf("%s %s (%s): reason %q, stdout %q, stderr %q", l.Name, p.Name, stats.ModeBusy, resp.Reason, resp.Stdout, resp.Stderr)
		}
		t := resp.Timing
		r.Samples = append(r.Samples, stats.Sample{D: d, Start: resp.startKind(), Counted: true, Timing: &t})
	}
	return r, nil
}

// awaitRestoredPool waits until l's snapshot is built and every ready
// sandbox of l's pool was made by restoring it, running one-shots to use
// up the sandboxes that were booted while the snapshot was being built:
// restored clones are what the pool serves once it is warm, and they
// differ (memory is loaded as it is touched).
func (s *server) awaitRestoredPool(ctx context.Context, l langs.Lang, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	state := ""
	for {
		m, err := s.poolMetrics(ctx)
		if err != nil {
			return fmt.Errorf("waiting for a pool of restored %s sandboxes: %w", l.Name, err)
		}
		switch state = snapshotState(m, l.Name); state {
		case "failed", "off":
			return fmt.Errorf("no pool of restored %s sandboxes: snapshot state %q", l.Name, state)
		case "ready":
			if err := s.awaitFull(ctx, l.Name); err != nil {
				return err
			}
			kinds, err := s.readyStartKinds(l.Name)
			if err == nil && len(kinds) > 0 && kinds["cold"] == 0 {
				return nil
			}
			if _, _, err := s.runOnce(ctx, l.Name, l.Probes[0].Code); err != nil {
				return err
			}
			continue
		}
		if err := bench.Sleep(ctx, 200*time.Millisecond); err != nil {
			return fmt.Errorf("waiting for %s's snapshot (state %q): %w", l.Name, state, err)
		}
	}
}

// readyStartKinds counts how the server's live sandboxes of language
// name were made, from their bundles and runsc state.
func (s *server) readyStartKinds(name string) (map[string]int, error) {
	return s.startKinds(func(config []byte) bool { return host.BundleLanguage(config) == name })
}

// startKinds counts how the server's live sandboxes whose bundle config
// match accepts were made, from their runsc state; a sandbox whose runsc
// state is not written yet is an error (it is still starting).
func (s *server) startKinds(match func(config []byte) bool) (map[string]int, error) {
	ents, err := os.ReadDir(filepath.Join(s.state, "bundles"))
	if err != nil {
		return nil, err
	}
	kinds := map[string]int{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(s.state, "bundles", e.Name(), "config.json"))
		if err != nil || !match(b) {
			continue
		}
		kind, err := host.StartKindOf(filepath.Join(s.state, "runsc"), e.Name())
		if err != nil {
			return nil, err
		}
		kinds[kind]++
	}
	return kinds, nil
}
