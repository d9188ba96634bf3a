package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/host"
	"github.com/paddock-dev/paddock/benchmarks/internal/langs"
	"github.com/paddock-dev/paddock/benchmarks/internal/load"
	"github.com/paddock-dev/paddock/benchmarks/internal/memory"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
	"github.com/paddock-dev/paddock/benchmarks/internal/server"
	"github.com/paddock-dev/paddock/benchmarks/internal/sessions"
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// pooledPhase serves every template from pools held at o.Pool, restored
// from snapshots where the template allows them: warm runs from a full
// idle pool, warm runs back to back, sessions, then the memory of the
// idle pools.
func pooledPhase(ctx context.Context, o bench.Options, cg host.Cgroups, rep *report.Report) (err error) {
	s, err := server.Start(ctx, o, server.Config{Name: "pooled", Templates: langs.Names(langs.All), Pool: o.Pool, Snapshots: true})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Finish(ctx, rep)) }()
	for _, l := range langs.All {
		if l.Snapshotted {
			if err := s.AwaitRestoredPool(ctx, l, server.RestoreTimeout); err != nil {
				return err
			}
		}
		// One unmeasured run per language: first-use costs on both sides.
		if err := s.AwaitFull(ctx, l.Name); err != nil {
			return err
		}
		if _, _, err := s.RunOnce(ctx, l.Name, l.Probes[0].Code); err != nil {
			return err
		}
		for _, p := range l.Probes {
			r, err := oneShotRow(ctx, s, l, p, stats.ModePool, o.WarmN, 0)
			rep.Rows = append(rep.Rows, r)
			if err != nil {
				return err
			}
		}
		for _, p := range l.Probes {
			r, err := busyRow(ctx, s, l, p, o.BusyN, o.BusyInterval)
			rep.Rows = append(rep.Rows, r)
			if err != nil {
				return err
			}
		}
	}
	for _, l := range langs.All {
		r, err := sessions.ExecuteRow(ctx, s, l, o.SessionN)
		rep.Rows = append(rep.Rows, r)
		if err != nil {
			return err
		}
	}
	if rep.MemoryNote != "" {
		return nil
	}
	bench.Progress("reading the memory of %d idle sandboxes per template (%s)", o.Pool, cg)
	mems, err := memory.Idle(ctx, s, cg, o.MemSettle)
	if err != nil {
		rep.MemoryNote = "memory not measured: " + err.Error()
	}
	rep.Memory = append(rep.Memory, mems...)
	return nil
}

// shippedPhase measures sustained throughput on a server whose pools
// keep the sizes their templates ship with, adaptive sizing on, as `make
// run` serves them.
func shippedPhase(ctx context.Context, o bench.Options, rep *report.Report) (err error) {
	s, err := server.Start(ctx, o, server.Config{Name: "as shipped", Templates: o.ThroughputLangs, Pool: server.PoolShipped, Snapshots: true})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Finish(ctx, rep)) }()
	for _, name := range o.ThroughputLangs {
		l, _ := langs.ByName(name)
		if l.Snapshotted {
			if err := s.AwaitRestoredPool(ctx, l, server.RestoreTimeout); err != nil {
				return err
			}
		}
		bench.Progress("%s one-shot throughput for %s", name, o.ThroughputDuration)
		t, err := paddockRate(ctx, s, l, o.ThroughputConcurrency, o.ThroughputDuration)
		if err != nil {
			return err
		}
		rep.Throughput = append(rep.Throughput, t)
	}
	return nil
}

// restorePhase runs with no pool and snapshots on: every run of a
// snapshotted template restores on the request path.
func restorePhase(ctx context.Context, o bench.Options, rep *report.Report) (err error) {
	for _, l := range langs.All {
		if !l.Snapshotted {
			for _, p := range l.Probes {
				rep.Rows = append(rep.Rows, stats.Row{Lang: l.Name, Probe: p.Name, Mode: stats.ModeRestore,
					Note: "n/a: not snapshotted (V8 and OpenSSL state can't be reseeded)"})
			}
		}
	}
	ls := langs.Snapshotted()
	if len(ls) == 0 {
		return nil
	}
	s, err := server.Start(ctx, o, server.Config{Name: "restore", Templates: langs.Names(ls), Pool: 0, Snapshots: true})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Finish(ctx, rep)) }()
	for _, l := range ls {
		if err := awaitRestores(ctx, s, l, l.Probes[0], server.RestoreTimeout); err != nil {
			return err
		}
		for _, p := range l.Probes {
			r, err := oneShotRow(ctx, s, l, p, stats.ModeRestore, o.RestoreN, o.Settle)
			rep.Rows = append(rep.Rows, r)
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// coldPhase runs with no pool and no snapshots: every run starts a
// sandbox, warm-up included, on the request path.
func coldPhase(ctx context.Context, o bench.Options, rep *report.Report) (err error) {
	s, err := server.Start(ctx, o, server.Config{Name: "cold", Templates: langs.Names(langs.All), Pool: 0, Snapshots: false})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Finish(ctx, rep)) }()
	for _, l := range langs.All {
		for _, p := range l.Probes {
			r, err := oneShotRow(ctx, s, l, p, stats.ModeCold, o.ColdN, o.Settle)
			rep.Rows = append(rep.Rows, r)
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// paddockRate measures one-shot runs of l's trivial probe against s,
// counting the sandboxes s makes meanwhile by how it makes them.
func paddockRate(ctx context.Context, s *server.Server, l langs.Lang, conc int, dur time.Duration) (report.Throughput, error) {
	p := l.Probes[0]
	if err := s.AwaitFull(ctx, l.Name); err != nil {
		return report.Throughput{}, err
	}
	before, err := s.MadeCounts(ctx, l.Name)
	if err != nil {
		return report.Throughput{}, err
	}
	t, err := load.Rate(ctx, conc, dur, func(ctx context.Context) (string, time.Duration, error) {
		resp, d, err := s.RunOnce(ctx, l.Name, p.Code)
		if err != nil {
			return "", d, err
		}
		if resp.Reason != "ok" || !p.OK(resp.Stdout) {
			return "", d, fmt.Errorf("%s %s: reason %q, stdout %q", l.Name, p.Name, resp.Reason, resp.Stdout)
		}
		return resp.StartKind(), d, nil
	})
	t.Lang, t.Target = l.Name, report.TargetPaddock
	if err != nil {
		return t, err
	}
	after, err := s.MadeCounts(ctx, l.Name)
	if err != nil {
		return t, err
	}
	t.Made = map[string]int{}
	for k, v := range after {
		if n := v - before[k]; n > 0 {
			t.Made[k] = n
		}
	}
	return t, nil
}
