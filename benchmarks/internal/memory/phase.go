package memory

import (
	"context"
	"errors"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/host"
	"github.com/paddock-dev/paddock/benchmarks/internal/langs"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
	"github.com/paddock-dev/paddock/benchmarks/internal/server"
)

// Phase pools every template of Templates on one server, the
// pools of snapshotted templates refilled by restores, and reads the
// memory of the idle pools by template. It runs with --memory-only: a
// whole bench reads the same from its pooled and python-slim phases.
func Phase(ctx context.Context, o bench.Options, cg host.Cgroups, rep *report.Report) (err error) {
	if rep.MemoryNote != "" {
		return errors.New(rep.MemoryNote)
	}
	s, err := server.Start(ctx, o, server.Config{Name: "memory", Templates: Templates, Pool: max(o.Pool, 1), Snapshots: true})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Finish(ctx, rep)) }()
	for _, name := range Templates {
		if err := s.AwaitRestoredTemplate(ctx, name, server.RestoreTimeout); err != nil {
			return err
		}
	}
	bench.Progress("reading the memory of %d idle sandboxes per template (%s)", max(o.Pool, 1), cg)
	mems, err := IdleByTemplate(ctx, s, cg, o.MemSettle)
	rep.Memory = append(rep.Memory, mems...)
	return err
}

// ColdPhase fills python pools by cold starts, to compare their
// memory with restored ones.
func ColdPhase(ctx context.Context, o bench.Options, cg host.Cgroups, rep *report.Report) (err error) {
	ls := langs.Snapshotted()
	if len(ls) == 0 || o.Pool == 0 || rep.MemoryNote != "" {
		return nil
	}
	s, err := server.Start(ctx, o, server.Config{Name: "cold pooled", Templates: langs.Names(ls), Pool: o.Pool, Snapshots: false})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Finish(ctx, rep)) }()
	mems, err := Idle(ctx, s, cg, o.MemSettle)
	rep.Memory = append(rep.Memory, mems...)
	return err
}
