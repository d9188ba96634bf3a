package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/host"
	"github.com/paddock-dev/paddock/benchmarks/internal/langs"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
)

// memoryPhase pools every template of memTemplates on one server, the
// pools of snapshotted templates refilled by restores, and reads the
// memory of the idle pools by template. It runs with --memory-only: a
// whole bench reads the same from its pooled and python-slim phases.
func memoryPhase(ctx context.Context, o bench.Options, cg host.Cgroups, rep *report.Report) (err error) {
	if rep.MemoryNote != "" {
		return errors.New(rep.MemoryNote)
	}
	s, err := startServer(ctx, o, serverConfig{name: "memory", templates: memTemplates, pool: max(o.Pool, 1), snapshots: true})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.finish(ctx, rep)) }()
	for _, name := range memTemplates {
		if err := s.awaitRestoredTemplate(ctx, name, restoreTimeout); err != nil {
			return err
		}
	}
	bench.Progress("reading the memory of %d idle sandboxes per template (%s)", max(o.Pool, 1), cg)
	mems, err := s.idleMemoryByTemplate(ctx, cg, o.MemSettle)
	rep.Memory = append(rep.Memory, mems...)
	return err
}

// awaitRestoredTemplate waits until template name's pool is full and, if
// the template is snapshotted, holds only restored sandboxes: the pool
// first fills by cold starts while the snapshot is built, so runs cycle
// those out.
func (s *server) awaitRestoredTemplate(ctx context.Context, name string, timeout time.Duration) error {
	t, l, err := langs.ForTemplate(name)
	if err != nil {
		return err
	}
	if !t.Snapshot {
		return s.awaitFull(ctx, name)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		states, err := s.pools(ctx)
		if err != nil {
			return fmt.Errorf("waiting for a pool of restored %s sandboxes: %w", name, err)
		}
		switch st := states[name].Pool.Snapshot; st {
		case "failed", "off":
			return fmt.Errorf("no pool of restored %s sandboxes: snapshot state %q", name, st)
		case "ready":
			if err := s.awaitFull(ctx, name); err != nil {
				return err
			}
			kinds, err := s.templateStartKinds(name)
			if err == nil && len(kinds) > 0 && kinds["cold"] == 0 {
				return nil
			}
			if _, _, err := s.runBody(ctx, name, map[string]string{"template": name, "code": l.Probes[0].Code}); err != nil {
				return err
			}
			continue
		}
		if err := bench.Sleep(ctx, 200*time.Millisecond); err != nil {
			return fmt.Errorf("waiting for %s's snapshot: %w", name, err)
		}
	}
}

// templateStartKinds counts how the server's live sandboxes of template
// name were made.
func (s *server) templateStartKinds(name string) (map[string]int, error) {
	return s.startKinds(func(config []byte) bool { return host.BundleTemplate(config) == name })
}
