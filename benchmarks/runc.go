package main

import (
	"context"
	"errors"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/host"
	"github.com/paddock-dev/paddock/benchmarks/internal/langs"
	"github.com/paddock-dev/paddock/benchmarks/internal/memory"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
	"github.com/paddock-dev/paddock/benchmarks/internal/server"
	"github.com/paddock-dev/paddock/benchmarks/internal/sessions"
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// runcPhase measures the runc runtime the way the gVisor phases measure
// gVisor, for the "gVisor ÷ runc" headlines: warm runs from a full idle
// pool, sessions and the idle pools' memory on a pooled server, cold
// starts on a server with no pool, then throughput on a server as
// shipped. runc has no snapshots.
func runcPhase(ctx context.Context, o bench.Options, cg host.Cgroups, rep *report.Report) error {
	return errors.Join(runcPooled(ctx, o, cg, rep), runcCold(ctx, o, rep), runcThroughput(ctx, o, rep))
}

func runcPooled(ctx context.Context, o bench.Options, cg host.Cgroups, rep *report.Report) (err error) {
	s, err := server.Start(ctx, o, server.Config{Name: "runc pooled", Templates: langs.Names(langs.All), Pool: o.Pool, Runtime: "runc"})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Finish(ctx, rep)) }()
	for _, l := range langs.All {
		if err := s.AwaitFull(ctx, l.Name); err != nil {
			return err
		}
		// One unmeasured run per language: first-use costs on both sides.
		if _, _, err := s.RunOnce(ctx, l.Name, l.Probes[0].Code); err != nil {
			return err
		}
		for _, p := range l.Probes {
			r, err := oneShotRow(ctx, s, l, p, stats.ModeRuncPool, o.WarmN, 0)
			rep.Rows = append(rep.Rows, r)
			if err != nil {
				return err
			}
		}
	}
	for _, l := range langs.All {
		r, err := sessions.ExecuteRow(ctx, s, l, o.SessionN)
		r.Mode = stats.ModeRuncSession
		rep.Rows = append(rep.Rows, r)
		if err != nil {
			return err
		}
	}
	if rep.MemoryNote != "" {
		return nil
	}
	rc := cg.ForRunc()
	bench.Progress("reading the memory of %d idle runc sandboxes per template (%s)", o.Pool, rc)
	mems, err := memory.Idle(ctx, s, rc, o.MemSettle)
	if err != nil {
		rep.MemoryNote = "runc memory not measured: " + err.Error()
	}
	rep.Memory = append(rep.Memory, mems...)
	return nil
}

func runcCold(ctx context.Context, o bench.Options, rep *report.Report) (err error) {
	s, err := server.Start(ctx, o, server.Config{Name: "runc cold", Templates: langs.Names(langs.All), Pool: 0, Runtime: "runc"})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Finish(ctx, rep)) }()
	for _, l := range langs.All {
		for _, p := range l.Probes {
			r, err := oneShotRow(ctx, s, l, p, stats.ModeRuncCold, o.ColdN, o.Settle)
			rep.Rows = append(rep.Rows, r)
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func runcThroughput(ctx context.Context, o bench.Options, rep *report.Report) (err error) {
	if len(o.ThroughputLangs) == 0 {
		return nil
	}
	s, err := server.Start(ctx, o, server.Config{Name: "runc as shipped", Templates: o.ThroughputLangs, Pool: server.PoolShipped, Runtime: "runc"})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Finish(ctx, rep)) }()
	for _, name := range o.ThroughputLangs {
		l, _ := langs.ByName(name)
		bench.Progress("%s one-shot throughput on runc for %s", name, o.ThroughputDuration)
		t, err := paddockRate(ctx, s, l, o.ThroughputConcurrency, o.ThroughputDuration)
		t.Target = report.TargetRunc
		if err != nil {
			return err
		}
		rep.Throughput = append(rep.Throughput, t)
	}
	return nil
}
