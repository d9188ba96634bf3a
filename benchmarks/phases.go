package main

import (
	"context"
	"errors"
	"slices"
	"time"
)

// restoreTimeout bounds the wait for a server's first restore: its
// snapshot may have to be built (a cold start with the warm-up, then a
// checkpoint).
const restoreTimeout = 3 * time.Minute

// langNames returns the names of ls.
func langNames(ls []lang) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.name)
	}
	return out
}

func snapshotted() []lang {
	var out []lang
	for _, l := range langs {
		if l.snapshotted {
			out = append(out, l)
		}
	}
	return out
}

func nativePhase(ctx context.Context, o options, rep *report) error {
	for _, l := range langs {
		for _, p := range l.probes {
			r, err := nativeRow(ctx, l, p, o.nativeN)
			if err != nil {
				return err
			}
			rep.Rows = append(rep.Rows, r)
		}
	}
	return nil
}

func rawPhase(ctx context.Context, o options, rep *report) error {
	for _, l := range langs {
		fs, err := templateRootfs(o.cache, l.name)
		if err != nil {
			return err
		}
		for _, p := range l.probes {
			r, err := rawRow(ctx, o, l, p, fs, o.rawN)
			if err != nil {
				return err
			}
			rep.Rows = append(rep.Rows, r)
		}
	}
	return nil
}

// pooledPhase serves every template from full pools restored from
// snapshots where the template allows them: warm runs, sessions, the
// memory of the idle pools, then the throughput.
func pooledPhase(ctx context.Context, o options, rep *report) (err error) {
	s, err := startServer(ctx, o, serverConfig{name: "pooled", templates: langNames(langs), pool: o.pool, snapshots: true})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.finish(ctx, rep)) }()
	for _, l := range langs {
		// One unmeasured run per language: first-use costs on both sides.
		if err := s.awaitFull(ctx, l.name); err != nil {
			return err
		}
		if _, _, err := s.runOnce(ctx, l.name, l.probes[0].code); err != nil {
			return err
		}
		for _, p := range l.probes {
			r, err := s.oneShotRow(ctx, l, p, modePool, o.warmN, 0)
			rep.Rows = append(rep.Rows, r)
			if err != nil {
				return err
			}
		}
	}
	for _, l := range langs {
		r, err := s.sessionRow(ctx, l, o.sessionN)
		rep.Rows = append(rep.Rows, r)
		if err != nil {
			return err
		}
	}
	progress("reading the memory of %d idle sandboxes per template", o.pool)
	mems, err := s.idleMemory(ctx, o.memSettle)
	if err != nil {
		rep.MemoryNote = "memory not measured: " + err.Error()
	}
	rep.Memory = append(rep.Memory, mems...)
	for _, name := range o.tpLangs {
		l, _ := langByName(name)
		progress("%s one-shot throughput for %s", name, o.tpDuration)
		t, err := s.paddockRate(ctx, l, o.tpConcurrency, o.tpDuration)
		if err != nil {
			return err
		}
		rep.Throughput = append(rep.Throughput, t)
	}
	return nil
}

// restorePhase runs with no pool and snapshots on: every run of a
// snapshotted template restores on the request path.
func restorePhase(ctx context.Context, o options, rep *report) (err error) {
	for _, l := range langs {
		if !l.snapshotted {
			for _, p := range l.probes {
				rep.Rows = append(rep.Rows, row{Lang: l.name, Probe: p.name, Mode: modeRestore,
					Note: "n/a: not snapshotted (V8 and OpenSSL state can't be reseeded)"})
			}
		}
	}
	ls := snapshotted()
	if len(ls) == 0 {
		return nil
	}
	s, err := startServer(ctx, o, serverConfig{name: "restore", templates: langNames(ls), pool: 0, snapshots: true})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.finish(ctx, rep)) }()
	for _, l := range ls {
		if err := s.awaitRestores(ctx, l, l.probes[0], restoreTimeout); err != nil {
			return err
		}
		for _, p := range l.probes {
			r, err := s.oneShotRow(ctx, l, p, modeRestore, o.restoreN, o.settle)
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
func coldPhase(ctx context.Context, o options, rep *report) (err error) {
	s, err := startServer(ctx, o, serverConfig{name: "cold", templates: langNames(langs), pool: 0, snapshots: false})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.finish(ctx, rep)) }()
	for _, l := range langs {
		for _, p := range l.probes {
			r, err := s.oneShotRow(ctx, l, p, modeCold, o.coldN, o.settle)
			rep.Rows = append(rep.Rows, r)
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// coldMemoryPhase fills python pools by cold starts, to compare their
// memory with restored ones.
func coldMemoryPhase(ctx context.Context, o options, rep *report) (err error) {
	ls := snapshotted()
	if len(ls) == 0 || o.pool == 0 {
		return nil
	}
	s, err := startServer(ctx, o, serverConfig{name: "cold pooled", templates: langNames(ls), pool: o.pool, snapshots: false})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.finish(ctx, rep)) }()
	mems, err := s.idleMemory(ctx, o.memSettle)
	rep.Memory = append(rep.Memory, mems...)
	return err
}

func rawRatePhase(ctx context.Context, o options, rep *report) error {
	for _, name := range o.tpLangs {
		l, _ := langByName(name)
		fs, err := templateRootfs(o.cache, l.name)
		if err != nil {
			return err
		}
		progress("%s raw runsc rate for %s", name, o.tpDuration)
		t, err := rawRate(ctx, o, l, fs, o.tpConcurrency, o.tpDuration)
		if err != nil {
			return err
		}
		rep.Throughput = append(rep.Throughput, t)
	}
	return nil
}

// sortRows orders rows by language, then probe, then mode from the
// slowest baseline to the warmest path; sessions come last.
func sortRows(rows []row) {
	modes := []string{modeNative, modeRaw, modeCold, modeRestore, modePool, modeSession}
	langIdx := func(name string) int {
		return slices.IndexFunc(langs, func(l lang) bool { return l.name == name })
	}
	probeIdx := func(r row) int {
		l, ok := langByName(r.Lang)
		if !ok {
			return 0
		}
		if i := slices.IndexFunc(l.probes, func(p probe) bool { return p.name == r.Probe }); i >= 0 {
			return i
		}
		return len(l.probes)
	}
	slices.SortStableFunc(rows, func(a, b row) int {
		if a.Mode == modeSession || b.Mode == modeSession {
			if d := boolIdx(a.Mode == modeSession) - boolIdx(b.Mode == modeSession); d != 0 {
				return d
			}
		}
		if d := langIdx(a.Lang) - langIdx(b.Lang); d != 0 {
			return d
		}
		if d := probeIdx(a) - probeIdx(b); d != 0 {
			return d
		}
		return slices.Index(modes, a.Mode) - slices.Index(modes, b.Mode)
	})
}

func boolIdx(b bool) int {
	if b {
		return 1
	}
	return 0
}
