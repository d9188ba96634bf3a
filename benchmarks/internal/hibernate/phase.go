package hibernate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/host"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
	"github.com/paddock-dev/paddock/benchmarks/internal/server"
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// Title is the phase's title, which --hibernate-only keeps.
const Title = "session hibernation: pause and resume against a cold session start, idle and beside a busy session; sessions held live and hibernated"

// budgetMB is the --hibernate-budget-mb the phase's server runs with:
// the shipped default, said explicitly so the report can divide by it.
const budgetMB = 20 << 10

// Phase runs two servers, both with no pool: one hibernating sessions
// (snapshots on, so that a Python session's sandbox is restored from the
// template's snapshot when it is created), one with snapshots off whose
// sessions start cold. Per template it takes o.HibernateN rounds of
// pause, resume, first cell, pause, waking cell on the first, in turns
// with o.HibernateCold cold session starts on the second; then, the cold
// server stopped, the same rounds while a Python session runs a busy
// loop; then the capacity of o.HibernateSessions Python sessions.
func Phase(ctx context.Context, o bench.Options, cg host.Cgroups, rep *report.Report) (err error) {
	if !server.ServeHas(o.Paddock, "hibernate-dir") {
		return fmt.Errorf("%s serve has no --hibernate-dir (rebuild it with `make build`)", o.Paddock)
	}
	names := report.HibernateTemplates
	k := max(o.HibernateSessions, 0)
	// The rounds hold two sessions at once; the capacity part wants the
	// limit one above its k, so that one more session opens if the
	// hibernated ones count and k+1 more if they do not.
	maxSessions := max(k, 2) + 1
	hib, err := server.Start(ctx, o, server.Config{Name: "hibernation", Templates: names, Pool: 0, Snapshots: true, Extra: []string{
		"--hibernate-after=0", "--hibernate-budget-mb=" + strconv.Itoa(budgetMB),
		"--max-sessions=" + strconv.Itoa(maxSessions), "--tenant-max-sessions=" + strconv.Itoa(maxSessions+1)}})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, hib.Finish(ctx, rep)) }()
	if _, err := os.Stat(filepath.Join(hib.StateDir(), "hibernate")); err != nil {
		return fmt.Errorf("the hibernation server keeps no images in its state dir: %w", err)
	}
	cold, err := server.Start(ctx, o, server.Config{Name: "cold sessions", Templates: names, Pool: 0, Snapshots: false})
	if err != nil {
		return err
	}
	coldUp := true
	defer func() {
		if coldUp {
			err = errors.Join(err, cold.Finish(ctx, rep))
		}
	}()
	if err := awaitSnapshots(ctx, hib, names); err != nil {
		return err
	}

	hs := map[string]*report.Hibernation{}
	for _, name := range names {
		hs[name] = &report.Hibernation{Template: name}
	}
	defer func() {
		for _, name := range names {
			rep.Hibernation = append(rep.Hibernation, *hs[name])
		}
	}()
	for _, name := range names {
		rows := newPairRows(name, report.ModeHibernateIdle)
		coldFirst := stats.Row{Lang: name, Probe: report.ProbeColdStart, Mode: report.ModeSessionCold}
		coldState := stats.Row{Lang: name, Probe: report.ProbeColdState, Mode: report.ModeSessionCold}
		// One unmeasured cold start, then one before every every-th round.
		every := max(o.HibernateN/max(o.HibernateCold, 1), 1)
		takeCold := func(i int) error {
			if i > 0 && ((i-1)%every != 0 || countedLen(coldFirst) >= o.HibernateCold) {
				return nil
			}
			first, state, err := coldSample(ctx, cold, name, i > 0)
			if err != nil {
				return err
			}
			coldFirst.Samples, coldState.Samples = append(coldFirst.Samples, first), append(coldState.Samples, state)
			if i > 0 && !first.Counted {
				coldFirst.Mismatches++
				coldState.Mismatches++
			}
			return nil
		}
		err := measurePairs(ctx, hib, name, o.HibernateN, &rows, hs[name], takeCold)
		rep.Rows = append(append(rep.Rows, rows.all()...), coldFirst, coldState)
		if err != nil {
			return err
		}
		bench.Progress("  %s idle: pause p50 %s, resume p50 %s, first cell p50 %s; cold session start p50 %s, to its state %s", name,
			ms(rows.pause.P50()), ms(rows.resume.P50()), ms(rows.first.P50()), ms(coldFirst.P50()), ms(coldState.P50()))
	}
	coldUp = false
	if err := cold.Finish(ctx, rep); err != nil {
		return err
	}

	n, err := startNeighbour(ctx, hib)
	if err != nil {
		return err
	}
	busyErr := func() error {
		for _, name := range names {
			rows := newPairRows(name, report.ModeHibernateBusy)
			err := measurePairs(ctx, hib, name, o.HibernateN, &rows, &report.Hibernation{}, nil)
			rep.Rows = append(rep.Rows, rows.all()...)
			if err != nil {
				return err
			}
			bench.Progress("  %s beside a busy session: pause p50 %s, resume p50 %s, first cell p50 %s (%d busy cells so far)", name,
				ms(rows.pause.P50()), ms(rows.resume.P50()), ms(rows.first.P50()), n.cells.Load())
		}
		return nil
	}()
	if err := errors.Join(busyErr, n.stop(ctx)); err != nil {
		return err
	}

	if k == 0 {
		return nil
	}
	if rep.MemoryNote != "" {
		return errors.New("session capacity not measured: " + rep.MemoryNote)
	}
	c, err := capacity(ctx, hib, cg, "python", k, maxSessions, budgetMB<<20, o.MemSettle)
	rep.Capacity = append(rep.Capacity, c)
	return err
}

// awaitSnapshots waits until every snapshotted template of names has its
// snapshot ready on s, so that sessions are restored from it when made.
func awaitSnapshots(ctx context.Context, s *server.Server, names []string) error {
	ctx, cancel := context.WithTimeout(ctx, server.RestoreTimeout)
	defer cancel()
	for {
		ps, err := s.Pools(ctx)
		if err != nil {
			return err
		}
		waiting := ""
		for _, name := range names {
			switch st := ps[name].Pool.Snapshot; st {
			case "ready", "off":
			case "failed":
				return fmt.Errorf("the %s snapshot failed", name)
			default:
				waiting = name
			}
		}
		if waiting == "" {
			return nil
		}
		if err := bench.Sleep(ctx, 200*time.Millisecond); err != nil {
			return fmt.Errorf("waiting for the %s snapshot: %w", waiting, err)
		}
	}
}

func countedLen(r stats.Row) int { return len(r.Counted()) }

func ms(d time.Duration) string { return d.Round(100 * time.Microsecond).String() }
