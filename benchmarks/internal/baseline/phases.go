package baseline

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/langs"
	"github.com/paddock-dev/paddock/benchmarks/internal/load"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// NativePhase times each template's own interpreter from its root
// filesystem (the baseline), then the host's at the same path where the
// host can run the probes.
func NativePhase(ctx context.Context, o bench.Options, rep *report.Report) error {
	for _, l := range langs.All {
		fs, err := TemplateRootfs(o.Cache, l.Name)
		if err != nil {
			return err
		}
		var rows []stats.Row
		err = InReadOnlyRoot(fs, func(root string) error {
			var err error
			rows, err = nativeRows(ctx, l, stats.ModeNative, "rootfs", o.NativeN, false, func(argv []string) *exec.Cmd { return RootfsCommand(root, argv) })
			return err
		})
		rep.Rows = append(rep.Rows, rows...)
		if err != nil {
			return err
		}
		rows, err = nativeRows(ctx, l, stats.ModeHost, "host", o.NativeN, true, hostCommand)
		rep.Rows = append(rep.Rows, rows...)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if len(r.Samples) == 0 {
				bench.Progress("note: %s %s row: %s", r.Lang, r.Mode, r.Note)
			}
		}
	}
	return nil
}

// Runtimes are the raw runsc baselines of one bench run, one per
// template, made on first use: a snapshotted template's checkpoint is
// taken once and restored by every phase that needs it.
type Runtimes struct {
	o      bench.Options
	byName map[string]*Runtime
	images map[string]*Image
}

// NewRuntimes makes none yet: each is made on first use.
func NewRuntimes(o bench.Options) *Runtimes { return &Runtimes{o: o} }

// Get is the raw runtime of template name, made on first use.
func (rs *Runtimes) Get(name string) (*Runtime, error) {
	if rt, ok := rs.byName[name]; ok {
		return rt, nil
	}
	rt, err := NewRuntime(rs.o, name)
	if err != nil {
		return nil, err
	}
	if rs.byName == nil {
		rs.byName = map[string]*Runtime{}
	}
	rs.byName[name] = rt
	return rt, nil
}

// Checkpointed is l's raw runtime and the checkpoint of its interpreter
// waiting after the template's warm-up, taken once.
func (rs *Runtimes) Checkpointed(ctx context.Context, l langs.Lang) (*Runtime, *Image, error) {
	rt, err := rs.Get(l.Name)
	if err != nil {
		return nil, nil, err
	}
	if img, ok := rs.images[l.Name]; ok {
		return rt, img, nil
	}
	img, err := rt.checkpoint(ctx, l.Sandboxed(waitingProgram(rt.warmup)))
	if err != nil {
		return nil, nil, err
	}
	if rs.images == nil {
		rs.images = map[string]*Image{}
	}
	rs.images[l.Name] = img
	return rt, img, nil
}

// Close releases every runtime made.
func (rs *Runtimes) Close() {
	for _, rt := range rs.byName {
		rt.Close()
	}
}

// RawPhase times raw `runsc run`s of every probe and, for snapshotted
// templates, raw restores of the template's checkpointed interpreter.
func RawPhase(ctx context.Context, rs *Runtimes, o bench.Options, rep *report.Report) error {
	for _, l := range langs.All {
		rt, err := rs.Get(l.Name)
		if err != nil {
			return err
		}
		for _, p := range l.Probes {
			r, err := rawRow(ctx, rt, l, p, o.RawN)
			rep.Rows = append(rep.Rows, r)
			if err != nil {
				return err
			}
		}
		if !l.Snapshotted {
			continue
		}
		rt, img, err := rs.Checkpointed(ctx, l)
		if err != nil {
			return err
		}
		for _, p := range l.Probes {
			r, err := rawRestoreRow(ctx, rt, img, l, p, o.RawN)
			rep.Rows = append(rep.Rows, r)
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// RawRatePhase measures the raw runsc rate of each throughput language
// with the kind of start its Paddock pool uses (a restore for snapshotted
// templates, a cold `runsc run` otherwise) and, for snapshotted ones, the
// cold rate as well: the target in docs/architecture.md is against it.
func RawRatePhase(ctx context.Context, rs *Runtimes, o bench.Options, rep *report.Report) error {
	for _, name := range o.ThroughputLangs {
		l, _ := langs.ByName(name)
		if l.Snapshotted {
			rt, img, err := rs.Checkpointed(ctx, l)
			if err != nil {
				return err
			}
			bench.Progress("%s raw runsc restore rate for %s", name, o.ThroughputDuration)
			t, err := rawRate(ctx, l, report.TargetRawRestore, o.ThroughputConcurrency, o.ThroughputDuration, func(ctx context.Context, code string) (Result, error) {
				return rt.restore(ctx, img, code)
			})
			if err != nil {
				return err
			}
			rep.Throughput = append(rep.Throughput, t)
		}
		if slices.ContainsFunc(rep.Throughput, func(t report.Throughput) bool {
			return t.Lang == l.Name && t.Target == report.TargetRaw && t.Concurrency == o.ThroughputConcurrency
		}) {
			continue // the steady phase measured it
		}
		rt, err := rs.Get(l.Name)
		if err != nil {
			return err
		}
		bench.Progress("%s raw runsc run rate for %s", name, o.ThroughputDuration)
		t, err := rawRate(ctx, l, report.TargetRaw, o.ThroughputConcurrency, o.ThroughputDuration, func(ctx context.Context, code string) (Result, error) {
			return rt.Run(ctx, l.Sandboxed(code))
		})
		if err != nil {
			return err
		}
		rep.Throughput = append(rep.Throughput, t)
	}
	return nil
}

// rawRate measures raw runs of l's trivial probe, each done by once and
// deleted: the rate gVisor itself allows on this machine under Paddock's
// limits.
func rawRate(ctx context.Context, l langs.Lang, target string, conc int, dur time.Duration, once func(ctx context.Context, code string) (Result, error)) (report.Throughput, error) {
	p := l.Probes[0]
	t, err := load.Rate(ctx, conc, dur, func(ctx context.Context) (string, time.Duration, error) {
		res, err := once(ctx, p.Code)
		if err == nil && !p.OK(res.Stdout) {
			err = fmt.Errorf("%s %s: stdout %q", target, l.Name, res.Stdout)
		}
		return "", res.Total, err
	})
	t.Lang, t.Target = l.Name, target
	return t, err
}
