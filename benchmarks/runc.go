package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/host"
	"github.com/paddock-dev/paddock/benchmarks/internal/langs"
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// runcPhase measures the runc runtime the way the gVisor phases measure
// gVisor, for the "gVisor ÷ runc" headlines: warm runs from a full idle
// pool, sessions and the idle pools' memory on a pooled server, cold
// starts on a server with no pool, then throughput on a server as
// shipped. runc has no snapshots.
func runcPhase(ctx context.Context, o bench.Options, cg host.Cgroups, rep *report) error {
	return errors.Join(runcPooled(ctx, o, cg, rep), runcCold(ctx, o, rep), runcThroughput(ctx, o, rep))
}

func runcPooled(ctx context.Context, o bench.Options, cg host.Cgroups, rep *report) (err error) {
	s, err := startServer(ctx, o, serverConfig{name: "runc pooled", templates: langs.Names(langs.All), pool: o.Pool, runtime: "runc"})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.finish(ctx, rep)) }()
	for _, l := range langs.All {
		if err := s.awaitFull(ctx, l.Name); err != nil {
			return err
		}
		// One unmeasured run per language: first-use costs on both sides.
		if _, _, err := s.runOnce(ctx, l.Name, l.Probes[0].Code); err != nil {
			return err
		}
		for _, p := range l.Probes {
			r, err := s.oneShotRow(ctx, l, p, stats.ModeRuncPool, o.WarmN, 0)
			rep.Rows = append(rep.Rows, r)
			if err != nil {
				return err
			}
		}
	}
	for _, l := range langs.All {
		r, err := s.sessionRow(ctx, l, o.SessionN)
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
	mems, err := s.idleMemory(ctx, rc, o.MemSettle)
	if err != nil {
		rep.MemoryNote = "runc memory not measured: " + err.Error()
	}
	rep.Memory = append(rep.Memory, mems...)
	return nil
}

func runcCold(ctx context.Context, o bench.Options, rep *report) (err error) {
	s, err := startServer(ctx, o, serverConfig{name: "runc cold", templates: langs.Names(langs.All), pool: 0, runtime: "runc"})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.finish(ctx, rep)) }()
	for _, l := range langs.All {
		for _, p := range l.Probes {
			r, err := s.oneShotRow(ctx, l, p, stats.ModeRuncCold, o.ColdN, o.Settle)
			rep.Rows = append(rep.Rows, r)
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func runcThroughput(ctx context.Context, o bench.Options, rep *report) (err error) {
	if len(o.ThroughputLangs) == 0 {
		return nil
	}
	s, err := startServer(ctx, o, serverConfig{name: "runc as shipped", templates: o.ThroughputLangs, pool: poolShipped, runtime: "runc"})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.finish(ctx, rep)) }()
	for _, name := range o.ThroughputLangs {
		l, _ := langs.ByName(name)
		bench.Progress("%s one-shot throughput on runc for %s", name, o.ThroughputDuration)
		t, err := s.paddockRate(ctx, l, o.ThroughputConcurrency, o.ThroughputDuration)
		t.Target = targetRunc
		if err != nil {
			return err
		}
		rep.Throughput = append(rep.Throughput, t)
	}
	return nil
}

// runcHeadlines are the ratios users ask for: what gVisor costs against
// plain containers on the same machine, each measured the same way on
// both ("gVisor ÷ runc"; above 1, gVisor is slower, bigger or, for
// throughput, faster).
func runcHeadlines(rows []stats.Row, tps []throughput, mems []memRow) []headline {
	var out []headline
	p50 := func(l, p, mode string) time.Duration {
		r, _ := stats.FindRow(rows, l, p, mode)
		return r.P50()
	}
	for _, l := range langs.All {
		p := l.Probes[0]
		if v, ok := stats.Ratio(p50(l.Name, p.Name, stats.ModeCold), p50(l.Name, p.Name, stats.ModeRuncCold)); ok {
			out = append(out, untargeted(fmt.Sprintf("%s `%s`: cold start p50, gVisor ÷ runc", l.Name, p.Name), v, "x"))
		}
		if v, ok := stats.Ratio(p50(l.Name, p.Name, stats.ModePool), p50(l.Name, p.Name, stats.ModeRuncPool)); ok {
			out = append(out, untargeted(fmt.Sprintf("%s `%s`: warm one-shot p50, gVisor ÷ runc", l.Name, p.Name), v, "x"))
		}
		if v, ok := stats.Ratio(p50(l.Name, l.Expr, stats.ModeSession), p50(l.Name, l.Expr, stats.ModeRuncSession)); ok {
			out = append(out, untargeted(fmt.Sprintf("%s session `%s` round trip p50, gVisor ÷ runc", l.Name, l.Expr), v, "x"))
		}
	}
	rates := map[string]map[string]float64{}
	for _, t := range tps {
		if rates[t.Lang] == nil {
			rates[t.Lang] = map[string]float64{}
		}
		rates[t.Lang][t.Target] = t.rate()
	}
	for _, l := range langs.All {
		if r := rates[l.Name]; r[targetPaddock] > 0 && r[targetRunc] > 0 {
			out = append(out, untargeted(fmt.Sprintf("%s one-shot throughput, gVisor ÷ runc (below 1: runc serves more)", l.Name), r[targetPaddock]/r[targetRunc], "x"))
		}
	}
	usage := func(s memSample) uint64 { return s.Usage }
	for _, l := range langs.All {
		var gv, rc []memRow
		for _, m := range mems {
			switch {
			case m.Lang != l.Name || len(m.Samples) == 0:
			case m.Start == "runc":
				rc = append(rc, m)
			case strings.HasPrefix(m.Server, "pooled"):
				gv = append(gv, m) // the pooled server's: how make run fills its pools
			}
		}
		if len(gv) == 1 && len(rc) == 1 && rc[0].meanMB(usage) > 0 {
			out = append(out, untargeted(fmt.Sprintf("%s idle pooled sandbox host memory (gVisor made by %s), gVisor ÷ runc", l.Name, gv[0].Start),
				gv[0].meanMB(usage)/rc[0].meanMB(usage), "x"))
		}
	}
	return out
}
