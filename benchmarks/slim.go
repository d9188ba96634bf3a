package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/host"
	"github.com/paddock-dev/paddock/benchmarks/internal/memory"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
	"github.com/paddock-dev/paddock/benchmarks/internal/server"
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// The python / python-slim comparison: one image, two warm-ups. It runs
// both templates on one server and alternates between them, so that the
// ratios come from the same minutes of a shared machine.
var slimPair = []string{"python-slim", "python"}

// slimPhase measures, for python-slim and python alternately: warm
// print(1) from a full idle pool, the memory of the idle pooled sandboxes
// (both restored from their snapshots), print(1) restored on the request
// path (no pool), and the size of each snapshot image.
func slimPhase(ctx context.Context, o bench.Options, cg host.Cgroups, rep *report.Report) error {
	pooled, err := server.Start(ctx, o, server.Config{Name: "python pair pooled", Templates: slimPair, Pool: max(o.Pool, 1), Snapshots: true})
	if err != nil {
		return err
	}
	warm, mems, err := slimPooled(ctx, o, cg, pooled, rep.MemoryNote == "")
	err = errors.Join(err, pooled.Finish(ctx, rep))
	rep.Rows = append(rep.Rows, warm...)
	rep.Memory = append(rep.Memory, mems...)
	if err != nil {
		return err
	}
	cold, err := server.Start(ctx, o, server.Config{Name: "python pair restore", Templates: slimPair, Pool: 0, Snapshots: true})
	if err != nil {
		return err
	}
	restored, err := slimRestores(ctx, o, cold)
	err = errors.Join(err, cold.Finish(ctx, rep))
	rep.Rows = append(rep.Rows, restored...)
	printSlim(os.Stdout, append(warm, restored...), mems, snapshotSizes(o.Snapshots))
	return err
}

// slimPooled waits for both snapshots and for pools refilled by restores,
// then times warm print(1)s alternately and reads the idle pools' memory.
func slimPooled(ctx context.Context, o bench.Options, cg host.Cgroups, s *server.Server, readMemory bool) ([]stats.Row, []report.MemRow, error) {
	if err := awaitSnapshots(ctx, s, server.RestoreTimeout); err != nil {
		return nil, nil, err
	}
	rows := make([]stats.Row, len(slimPair))
	for i, name := range slimPair {
		rows[i] = stats.Row{Lang: name, Probe: "print(1)", Mode: stats.ModePool}
	}
	// The pools were first filled by cold starts, before the snapshots
	// were ready: unmeasured runs cycle them to restored sandboxes.
	for range max(o.Pool, 1) {
		for _, name := range slimPair {
			if err := s.AwaitFull(ctx, name); err != nil {
				return rows, nil, err
			}
			if _, _, err := s.RunBody(ctx, name, map[string]string{"template": name, "code": "print(1)"}); err != nil {
				return rows, nil, err
			}
		}
	}
	for range o.SlimN {
		for i, name := range slimPair {
			if err := s.AwaitFull(ctx, name); err != nil {
				return rows, nil, err
			}
			if err := slimSample(ctx, s, &rows[i], "pool"); err != nil {
				return rows, nil, err
			}
		}
	}
	if !readMemory {
		return rows, nil, nil
	}
	mems, err := memory.IdleByTemplate(ctx, s, cg, o.MemSettle)
	return rows, mems, err
}

// slimRestores times print(1) on a server with no pool: every run
// restores its template's snapshot on the request path.
func slimRestores(ctx context.Context, o bench.Options, s *server.Server) ([]stats.Row, error) {
	if err := awaitSnapshots(ctx, s, server.RestoreTimeout); err != nil {
		return nil, err
	}
	rows := make([]stats.Row, len(slimPair))
	for i, name := range slimPair {
		rows[i] = stats.Row{Lang: name, Probe: "print(1)", Mode: stats.ModeRestore}
	}
	for range o.SlimN {
		for i := range slimPair {
			if err := bench.Sleep(ctx, o.Settle); err != nil {
				return rows, err
			}
			if err := slimSample(ctx, s, &rows[i], "restore"); err != nil {
				return rows, err
			}
		}
	}
	return rows, nil
}

// slimSample runs print(1) on r's template and adds the sample, counted
// when the sandbox started as want says.
func slimSample(ctx context.Context, s *server.Server, r *stats.Row, want string) error {
	resp, d, err := s.RunBody(ctx, r.Lang, map[string]string{"template": r.Lang, "code": "print(1)"})
	if err != nil {
		return err
	}
	if resp.Reason != "ok" || resp.Stdout != "1\n" {
		return fmt.Errorf("%s print(1): reason %q, stdout %q, stderr %q", r.Lang, resp.Reason, resp.Stdout, resp.Stderr)
	}
	kind, t := resp.StartKind(), resp.Timing
	r.Samples = append(r.Samples, stats.Sample{D: d, Start: kind, Counted: kind == want, Timing: &t})
	if kind != want {
		r.Mismatches++
	}
	return nil
}

// awaitSnapshots waits until every template of the pair has a ready
// snapshot that a restore has used, or timeout passes.
func awaitSnapshots(ctx context.Context, s *server.Server, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		states, err := s.Pools(ctx)
		if err != nil {
			return err
		}
		ready := 0
		for _, name := range slimPair {
			st := states[name]
			if st.Pool.Snapshot == "failed" {
				return fmt.Errorf("%s snapshot failed", name)
			}
			if st.Pool.Snapshot == "ready" && (s.Config().Pool == 0 || st.Pool.Restores > 0) {
				ready++
			}
		}
		if ready == len(slimPair) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("snapshots of %v not ready after %s: %+v", slimPair, timeout, states)
		}
		if err := bench.Sleep(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
}

// snapshotSizes sums the files of each snapshot image under dir, by
// directory name (<template>-<key>).
func snapshotSizes(dir string) map[string]int64 {
	out := map[string]int64{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		_ = filepath.WalkDir(filepath.Join(dir, e.Name()), func(_ string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				if fi, err := d.Info(); err == nil {
					out[e.Name()] += fi.Size()
				}
			}
			return nil
		})
	}
	return out
}

// printSlim writes the comparison: p50s and their ratio, the server's
// own restore time, the idle memory and the image sizes.
func printSlim(w io.Writer, rows []stats.Row, mems []report.MemRow, sizes map[string]int64) {
	fmt.Fprintln(w, "\n== python-slim beside python (pandas-ready), alternating on one server ==")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "mode\tprobe\tpython-slim p50 ms\tpython p50 ms\tslim / python\tslim server start p50 ms\tpython server start p50 ms\t")
	for _, mode := range []string{stats.ModePool, stats.ModeRestore} {
		slim, ok1 := stats.FindRow(rows, "python-slim", "print(1)", mode)
		full, ok2 := stats.FindRow(rows, "python", "print(1)", mode)
		if !ok1 || !ok2 {
			continue
		}
		r := "-"
		if v, ok := stats.Ratio(slim.P50(), full.P50()); ok {
			r = fmt.Sprintf("%.3f", v)
		}
		fmt.Fprintf(tw, "%s\tprint(1)\t%s\t%s\t%s\t%.2f\t%.2f\t\n", mode, stats.FormatP50(slim.Counted()), stats.FormatP50(full.Counted()), r,
			slim.ServerStartP50(), full.ServerStartP50())
	}
	tw.Flush()
	for _, m := range mems {
		fmt.Fprintf(w, "idle pooled %s sandbox (%s, %d): usage %.1f MiB, rss %.1f MiB, shmem %.1f MiB\n", m.Lang, m.Start, len(m.Samples),
			m.MeanMB(func(s report.MemSample) uint64 { return s.Usage }), m.MeanMB(func(s report.MemSample) uint64 { return s.RSS }),
			m.MeanMB(func(s report.MemSample) uint64 { return s.Shmem }))
	}
	for name, n := range sizes {
		for _, t := range slimPair {
			if strings.HasPrefix(name, t+"-") && !strings.Contains(strings.TrimPrefix(name, t+"-"), "-") {
				fmt.Fprintf(w, "snapshot image %s: %.1f MiB\n", name, float64(n)/report.MiB)
			}
		}
	}
}
