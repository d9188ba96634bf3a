package steady

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/baseline"
	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/langs"
	"github.com/paddock-dev/paddock/benchmarks/internal/load"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
	"github.com/paddock-dev/paddock/benchmarks/internal/server"
)

// steadyCode is the stream's i-th program for language and what it prints.
func steadyCode(language string, i int64) (code, want string, ok bool) {
	switch language {
	case "python":
		return fmt.Sprintf("print(%d)", i), fmt.Sprintf("%d\n", i), true
	case "node":
		return fmt.Sprintf("console.log(%d)", i), fmt.Sprintf("%d\n", i), true
	}
	return "", "", false
}

// steadyTemplate is a template the server serves, as the phase needs it.
type steadyTemplate struct {
	name, language string
	snapshot       string // the pool's snapshot state: off, building, ready, failed
	limits         string // the template's limits as the server lists them
}

// sameRawLimits reports whether templates a and b of ts have the same
// limits, so that their raw runs would be the same runs.
func sameRawLimits(ts []steadyTemplate, a, b string) bool {
	limits := func(name string) string {
		for _, t := range ts {
			if t.name == name {
				return t.limits
			}
		}
		return ""
	}
	la := limits(a)
	return la != "" && la == limits(b)
}

// Phase runs the phase and appends its points to rep.Steady.
func Phase(ctx context.Context, o bench.Options, rs *baseline.Runtimes, rep *report.Report) (err error) {
	logf, err := os.CreateTemp("", "paddock-bench-steady-server-*.log")
	if err != nil {
		return err
	}
	defer logf.Close()
	bench.Progress("steady: the server's log is %s", logf.Name())
	s, err := server.Start(ctx, o, server.Config{Name: "steady (as make run ships it)", Shipped: true, Stderr: logf})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Finish(ctx, rep)) }()
	ts, err := steadyTemplates(ctx, s, o.SteadyTemplates)
	if err != nil {
		return err
	}
	raws := map[string]report.SteadyPoint{}    // by language and clients
	empties := map[string]report.SteadyPoint{} // by language
	for _, t := range ts {
		l, _ := langs.ByName(t.language)
		if o.SteadyRaw && o.SteadyEmpty && len(o.SteadyClients) > 0 {
			// Empty sandboxes, once per language at the highest client
			// count: the ceiling of one sandbox per run.
			empty := func(int64) ([]string, string) { return baseline.EmptyProgram, "" }
			if err := sharedRawPoint(ctx, s, o, rs, ts, t, l, empties, t.language, report.TargetEmpty, slices.Max(o.SteadyClients), empty, rep); err != nil {
				return err
			}
		}
		for _, c := range o.SteadyClients {
			if err := awaitSteady(ctx, s, t, l); err != nil {
				return err
			}
			bench.Progress("steady: %s, %d clients, paddock for %s (load %s)", t.name, c, o.SteadyDuration, loadavg())
			p, err := steadyPoint(ctx, s, t, c, o.SteadyDuration)
			if err != nil {
				return err
			}
			rep.Steady = append(rep.Steady, p)
			bench.Progress("steady: %s", p.Summary())
			if !o.SteadyRaw {
				continue
			}
			stream := func(i int64) ([]string, string) {
				code, want, _ := steadyCode(t.language, i)
				return l.Sandboxed(code), want
			}
			if err := sharedRawPoint(ctx, s, o, rs, ts, t, l, raws, fmt.Sprintf("%s/%d", t.language, c), report.TargetRaw, c, stream, rep); err != nil {
				return err
			}
		}
	}
	return nil
}

// sharedRawPoint appends to rep the point of target (raw or empty) for t
// at clients: a copy of the one stored under key in measured when it was
// of a template with the same language and limits (the same runs raw),
// else a new one, measured once t's pool is refilled and then stored.
func sharedRawPoint(ctx context.Context, s *server.Server, o bench.Options, rs *baseline.Runtimes, ts []steadyTemplate, t steadyTemplate, l langs.Lang,
	measured map[string]report.SteadyPoint, key, target string, clients int, argv func(int64) ([]string, string), rep *report.Report) error {
	if p, ok := measured[key]; ok && sameRawLimits(ts, p.Template, t.name) {
		p.RawOf, p.Template = p.Template, t.name
		rep.Steady = append(rep.Steady, p)
		bench.Progress("steady: %s, %d clients, %s: the point of %s (the same interpreter under the same limits)", t.name, clients, report.ShortTarget(target), p.RawOf)
		return nil
	}
	rt, err := rs.Get(t.name)
	if err != nil {
		return err
	}
	// The refills the Paddock points left behind finish first.
	if err := awaitSteady(ctx, s, t, l); err != nil {
		return err
	}
	bench.Progress("steady: %s, %d clients, %s for %s (load %s)", t.name, clients, target, o.SteadyDuration, loadavg())
	p, err := rawSteadyPoint(ctx, rt, t, target, clients, o.SteadyDuration, argv)
	if err != nil {
		return err
	}
	rep.Steady = append(rep.Steady, p)
	measured[key] = p
	bench.Progress("steady: %s", p.Summary())
	return nil
}

// steadyTemplates lists the templates the server serves, in name order,
// keeping only those in want when want is not empty. Each must have a
// language the phase can write a stream for.
func steadyTemplates(ctx context.Context, s *server.Server, want []string) ([]steadyTemplate, error) {
	ps, err := s.Pools(ctx)
	if err != nil {
		return nil, err
	}
	var out []steadyTemplate
	for name, p := range ps {
		if len(want) > 0 && !slices.Contains(want, name) {
			continue
		}
		if _, _, ok := steadyCode(p.Language, 0); !ok {
			return nil, fmt.Errorf("template %s: no steady stream for language %q", name, p.Language)
		}
		if _, ok := langs.ByName(p.Language); !ok {
			return nil, fmt.Errorf("template %s: unknown language %q", name, p.Language)
		}
		out = append(out, steadyTemplate{name: name, language: p.Language, snapshot: p.Pool.Snapshot, limits: string(p.Limits)})
	}
	for _, w := range want {
		if _, ok := ps[w]; !ok {
			return nil, fmt.Errorf("--steady-templates: the server does not serve %q", w)
		}
	}
	slices.SortFunc(out, func(a, b steadyTemplate) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// awaitSteady waits until t's pool is full, of restored sandboxes when t
// is snapshotted, so that each point starts from the same state.
func awaitSteady(ctx context.Context, s *server.Server, t steadyTemplate, l langs.Lang) error {
	if t.snapshot == "off" {
		return s.AwaitFull(ctx, t.name)
	}
	if _, ok := langs.ByName(t.name); !ok {
		// Bundles name their language, not their template, so the pool of
		// a template named otherwise (python-slim) is read from the
		// listing: its snapshot ready and used, then the pool full.
		return s.AwaitRestoredListing(ctx, t.name, server.RestoreTimeout)
	}
	l.Name = t.name
	return s.AwaitRestoredPool(ctx, l, server.RestoreTimeout)
}

// steadyPoint keeps clients one-shot runs of t's stream going for dur.
func steadyPoint(ctx context.Context, s *server.Server, t steadyTemplate, clients int, dur time.Duration) (report.SteadyPoint, error) {
	p := report.SteadyPoint{Template: t.name, Language: t.language, Target: report.TargetPaddock, Clients: clients, LoadBefore: loadavg()}
	var next atomic.Int64
	before, err := s.MadeCounts(ctx, t.name)
	if err != nil {
		return p, err
	}
	m := startCPUMeter(cpuSources{serverPID: s.PID(), sandboxes: s.OwnSandbox})
	tp, err := load.Loop(ctx, clients, dur, true, func(ctx context.Context) (string, time.Duration, error) {
		code, want, _ := steadyCode(t.language, next.Add(1))
		// The request names its template: python-slim is not a language.
		resp, d, err := s.RunBody(ctx, t.name, map[string]string{"template": t.name, "code": code})
		if err != nil {
			return "", d, err
		}
		if resp.Reason != "ok" || resp.Stdout != want {
			return "", d, fmt.Errorf("%s: reason %q, stdout %q, want %q", t.name, resp.Reason, resp.Stdout, want)
		}
		if resp.Template != "" && resp.Template != t.name {
			return "", d, fmt.Errorf("asked for template %s, ran on %s", t.name, resp.Template)
		}
		return resp.StartKind(), d, nil
	})
	p.CPU = m.stop()
	p.LoadAfter = loadavg()
	tp.Lang, tp.Target = t.name, report.TargetPaddock
	after, merr := s.MadeCounts(ctx, t.name)
	tp.Made = map[string]int{}
	for k, v := range after {
		if n := v - before[k]; n > 0 {
			tp.Made[k] = n
		}
	}
	p.T = tp
	return p, errors.Join(err, merr, ctx.Err())
}

// rawSteadyPoint keeps clients raw `runsc run` + delete going for dur,
// under t's limits: the i-th run runs argv and must print want.
func rawSteadyPoint(ctx context.Context, rt *baseline.Runtime, t steadyTemplate, target string, clients int, dur time.Duration, argv func(i int64) ([]string, string)) (report.SteadyPoint, error) {
	p := report.SteadyPoint{Template: t.name, Language: t.language, Target: target, Clients: clients, LoadBefore: loadavg()}
	var next atomic.Int64
	m := startCPUMeter(cpuSources{children: true})
	tp, err := load.Loop(ctx, clients, dur, true, func(ctx context.Context) (string, time.Duration, error) {
		args, want := argv(next.Add(1))
		res, err := rt.Run(ctx, args)
		if err == nil && res.Stdout != want {
			err = fmt.Errorf("%s %s: stdout %q, want %q", report.ShortTarget(target), t.name, res.Stdout, want)
		}
		return "", res.Total, err
	})
	p.CPU = m.stop()
	p.LoadAfter = loadavg()
	tp.Lang, tp.Target = t.name, target
	p.T = tp
	return p, errors.Join(err, ctx.Err())
}

// loadavg is the first three fields of /proc/loadavg, or "?".
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
