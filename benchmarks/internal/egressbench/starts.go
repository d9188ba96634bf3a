package egressbench

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
	"github.com/paddock-dev/paddock/benchmarks/internal/server"
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// ownLimits is a run's limits that differ from the python template's
// (one process fewer), so that its sandbox is booted for it on the
// request path, as a networked one is when its template has no snapshot
// to restore it from.
var ownLimits = map[string]any{"processes": 63}

// startMode is one kind of print(1) run and the start kind it must have
// ("": any, each kind kept in the row's note).
type startMode struct {
	mode, start string
	network     bool
	limits      map[string]any
}

// startModes run on a server with no pool: a run without a network is
// restored from the template's snapshot on the request path, one with
// its own limits is booted, and a networked one is whichever the server
// does for it; its baseline is the mode of the same start kind.
var startModes = []startMode{
	{report.ModeNetworked, "", true, nil},
	{report.ModeNoNetwork, "restore", false, nil},
	{report.ModeOwnLimits, "cold", false, ownLimits},
}

// starts takes o.EgressStarts print(1) samples of each mode, in turns,
// each with no sandbox starting and no sandbox veth left, and adds their
// rows.
func starts(ctx context.Context, o bench.Options, s *server.Server, rep *report.Report) error {
	if err := awaitRestore(ctx, s); err != nil {
		return err
	}
	rows := make([]stats.Row, len(startModes))
	for k, m := range startModes {
		rows[k] = stats.Row{Lang: "python", Probe: report.ProbeEgressStart, Mode: m.mode}
	}
	kinds := map[string]int{}
	defer func() {
		if len(kinds) > 0 {
			rows[0].Note = "started by " + kindList(kinds)
		}
		rep.Rows = append(rep.Rows, rows...)
	}()
	ens := egressNS(s.StateDir())
	for i := range o.EgressStarts * len(startModes) {
		k := i % len(startModes)
		m := startModes[k]
		if err := s.AwaitQuiet(ctx); err != nil {
			return err
		}
		if err := awaitNoSandboxNets(ctx, ens); err != nil {
			return err
		}
		if err := bench.Sleep(ctx, o.Settle); err != nil {
			return err
		}
		begin := time.Now()
		a, err := run(ctx, s, "print(1)", m.network, m.limits)
		d := time.Since(begin)
		if err != nil {
			return fmt.Errorf("%s: %w", m.mode, err)
		}
		if a.Stdout != "1\n" {
			return fmt.Errorf("%s: print(1) printed %q", m.mode, a.Stdout)
		}
		ok := m.start == "" || a.Start == m.start
		if m.start == "" {
			kinds[a.Start]++
		}
		t := a.Timing
		rows[k].Samples = append(rows[k].Samples, stats.Sample{D: d, Start: a.Start, Counted: ok, Timing: &t})
		if !ok {
			rows[k].Mismatches++
		}
	}
	bench.Progress("  print(1) p50: networked %s (%s), without a network (restored) %s, own limits (booted) %s",
		rows[0].P50().Round(time.Millisecond), kindList(kinds), rows[1].P50().Round(time.Millisecond), rows[2].P50().Round(time.Millisecond))
	return nil
}

// awaitRestore runs print(1) without a network until a run is restored
// from the template's snapshot: the snapshot is built.
func awaitRestore(ctx context.Context, s *server.Server) error {
	ctx, cancel := context.WithTimeout(ctx, server.RestoreTimeout)
	defer cancel()
	last := ""
	for {
		a, err := run(ctx, s, "print(1)", false, nil)
		if err != nil {
			return fmt.Errorf("waiting for a restore (last start %q): %w", last, err)
		}
		if last = a.Start; last == "restore" {
			return nil
		}
		if err := bench.Sleep(ctx, 500*time.Millisecond); err != nil {
			return fmt.Errorf("waiting for a restore (last start %q): %w", last, err)
		}
	}
}

// kindList is "restore×40" or "cold×3, restore×37".
func kindList(kinds map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		parts = append(parts, fmt.Sprintf("%s×%d", k, kinds[k]))
	}
	return strings.Join(parts, ", ")
}
