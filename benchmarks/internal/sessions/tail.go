package sessions

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/host"
	"github.com/paddock-dev/paddock/benchmarks/internal/load"
	"github.com/paddock-dev/paddock/benchmarks/internal/server"
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// The session tail phase: a Python session's `x + 1` back to back on an
// idle server, then again while clients stream one-shots at the server's
// capacity, with the kernel sandbox's CFS throttling read from its cgroup.

// cpuStat is a cgroup v1 cpu.stat: the CFS periods the cgroup was
// active in and how many of them it was throttled in.
type cpuStat struct{ periods, throttled, throttledNS uint64 }

func (a cpuStat) sub(b cpuStat) cpuStat {
	return cpuStat{a.periods - b.periods, a.throttled - b.throttled, a.throttledNS - b.throttledNS}
}

func readCPUStat(dir string) (cpuStat, error) {
	f, err := os.Open(filepath.Join(dir, "cpu.stat"))
	if err != nil {
		return cpuStat{}, err
	}
	defer f.Close()
	var st cpuStat
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		n, _ := strconv.ParseUint(v, 10, 64)
		switch k {
		case "nr_periods":
			st.periods = n
		case "nr_throttled":
			st.throttled = n
		case "throttled_time":
			st.throttledNS = n
		}
	}
	return st, sc.Err()
}

// tailResult is one binary's measurement in one round.
type tailResult struct {
	binary               string
	idle, loaded         []time.Duration
	idleCPU, loadedCPU   cpuStat
	oneShots             int
	oneShotBusy          int
	loadedFor            time.Duration
	kernelShares, kBurst string
	kernelCPUs           string // its cpuset
	// Run-queue wait (host.RunQueue) over each condition's cells, summed over
	// the kernel sandbox's threads and over the server's.
	idleWait, loadedWait       time.Duration
	idleSrvWait, loadedSrvWait time.Duration
}

// cpuCgroupRoot holds the gVisor sandboxes' cgroups in the cpu hierarchy.
const cpuCgroupRoot = "/sys/fs/cgroup/cpu/paddock"

// TailPhase measures the session tail of o.Paddock (and of
// o.TailBefore, alternating, when set) o.TailRounds times and prints its
// table to w.
func TailPhase(ctx context.Context, o bench.Options, w io.Writer) error {
	bins := []struct{ name, path string }{{"after", o.Paddock}}
	if o.TailBefore != "" {
		if err := server.CheckServeFlags(ctx, o.TailBefore); err != nil {
			return err
		}
		bins = append([]struct{ name, path string }{{"before", o.TailBefore}}, bins...)
	}
	var res []tailResult
	for round := range o.TailRounds {
		for _, b := range bins {
			bench.Progress("session tail: %s (%s), round %d", b.name, b.path, round+1)
			bo := o
			bo.Paddock = b.path
			if b.name == "before" {
				if agent := filepath.Join(filepath.Dir(b.path), "paddock-agent"); fileExists(agent) {
					bo.Agent = agent
				}
			}
			r, err := measureTail(ctx, bo)
			if err != nil {
				return fmt.Errorf("%s: %w", b.name, err)
			}
			r.binary = b.name
			res = append(res, r)
		}
	}
	loadAvg, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(w, "\nSession tail: python `x + 1` over HTTP, %d cells each; loaded = while %d clients stream one-shot print(1); load average %s", o.TailN, o.TailClients, loadAvg)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "binary\tidle p50 ms\tidle p99 ms\tthrottled/periods\tloaded p50 ms\tloaded p99 ms\tthrottled/periods\tloaded p99 ÷ idle p99\tloaded for s\tone-shots/s\trefused\tkernel shares, burst µs, CPUs\trun-queue wait µs/cell: kernel idle, loaded\tserver idle, loaded\t")
	for _, r := range res {
		i99, l99 := stats.Percentile(r.idle, 0.99), stats.Percentile(r.loaded, 0.99)
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%d/%d\t%.2f\t%.2f\t%d/%d\t%.1f\t%.1f\t%.2f\t%d\t%s, %s, %s\t%.0f, %.0f\t%.0f, %.0f\t\n", r.binary,
			stats.MS(stats.Percentile(r.idle, 0.5)), stats.MS(i99), r.idleCPU.throttled, r.idleCPU.periods,
			stats.MS(stats.Percentile(r.loaded, 0.5)), stats.MS(l99), r.loadedCPU.throttled, r.loadedCPU.periods,
			float64(l99)/float64(i99), r.loadedFor.Seconds(), float64(r.oneShots)/r.loadedFor.Seconds(), r.oneShotBusy,
			r.kernelShares, r.kBurst, r.kernelCPUs,
			perCell(r.idleWait, len(r.idle)), perCell(r.loadedWait, len(r.loaded)),
			perCell(r.idleSrvWait, len(r.idle)), perCell(r.loadedSrvWait, len(r.loaded)))
	}
	// The loaded cells take about as long as the one-shots beside them:
	// a window of a second or two holds a few restores at most, and its
	// p99 swings with where they fall. More cells (--session-tail) make
	// the window longer.
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "loaded for: how long the loaded cells took; one-shots/s: runs that ended in that window; refused: 429/503 answers to the streaming clients over the whole phase; run-queue wait: time the threads of the session's sandbox (Sentry, gofer, stubs) and of the server spent runnable but waiting for a CPU (/proc/<tid>/schedstat), summed over threads, per cell")
	return err
}

// measureTail starts a pooled Python server from o.Paddock and measures
// its session tail idle and loaded.
func measureTail(ctx context.Context, o bench.Options) (r tailResult, err error) {
	s, err := server.Start(ctx, o, server.Config{Name: "session tail", Templates: []string{"python"}, Pool: o.Pool, Snapshots: true})
	if err != nil {
		return r, err
	}
	defer func() { err = errors.Join(err, s.Stop()) }()
	if err := s.AwaitFull(ctx, "python"); err != nil {
		return r, err
	}
	var created struct {
		ID string `json:"id"`
	}
	if err := s.PostJSON(ctx, "/v1/sessions", map[string]any{"language": "python"}, http.StatusCreated, &created); err != nil {
		return r, err
	}
	defer func() {
		req, _ := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodDelete, s.URL()+"/v1/sessions/"+created.ID, nil)
		if resp, err := s.Client().Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	exec := func(code string) (time.Duration, error) {
		var resp struct {
			Status string `json:"status"`
		}
		start := time.Now()
		if err := s.PostJSON(ctx, "/v1/sessions/"+created.ID+"/execute", map[string]any{"code": code}, http.StatusOK, &resp); err != nil {
			return 0, err
		}
		d := time.Since(start)
		if resp.Status != "ok" {
			return 0, fmt.Errorf("%s: status %q", code, resp.Status)
		}
		return d, nil
	}
	if _, err := exec("x = 1"); err != nil {
		return r, err
	}
	// The idle cells wait for the pool's refill, which would compete.
	if err := s.AwaitFull(ctx, "python"); err != nil {
		return r, err
	}
	// The session's sandbox is the one busy through the idle cells.
	before, err := cpuStats(s)
	if err != nil {
		return r, err
	}
	rq0, srv0 := runQueues(s), serverRunQueue(s)
	for range o.TailN {
		d, err := exec("x + 1")
		if err != nil {
			return r, err
		}
		r.idle = append(r.idle, d)
	}
	after, err := cpuStats(s)
	if err != nil {
		return r, err
	}
	rq1, srv1 := runQueues(s), serverRunQueue(s)
	kernel, st, err := busiest(before, after)
	if err != nil {
		return r, err
	}
	r.idleWait = rq1[filepath.Base(kernel)].Since(rq0[filepath.Base(kernel)])
	r.idleSrvWait = srv1.Since(srv0)
	r.idleCPU = st
	r.kernelShares, r.kBurst = readTrim(kernel, "cpu.shares"), readTrim(kernel, "cpu.cfs_burst_us")
	r.kernelCPUs = readTrim(strings.Replace(kernel, "/cpu/", "/cpuset/", 1), "cpuset.cpus")

	// Loaded: the clients stream one-shots back to back; the cells start
	// once every client has finished one run, so that the pool is drained
	// and refills run.
	lctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var done, busy atomic.Int64
	var firstRuns sync.WaitGroup
	firstRuns.Add(o.TailClients)
	var streamErr error
	var errOnce sync.Once
	for range o.TailClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := true
			for lctx.Err() == nil {
				_, _, err := s.RunOnce(lctx, "python", "print(1)")
				var eb load.BusyError
				switch {
				case err == nil:
					done.Add(1)
				case errors.As(err, &eb):
					busy.Add(1)
				case lctx.Err() == nil:
					errOnce.Do(func() { streamErr = err })
				}
				if first {
					first = false
					firstRuns.Done()
				}
			}
		}()
	}
	firstRuns.Wait()
	begin, n0 := time.Now(), done.Load()
	err = func() error {
		s0, err := readCPUStat(kernel)
		if err != nil {
			return err
		}
		k0, _ := host.CgroupRunQueue(kernel)
		srv0 := serverRunQueue(s)
		for range o.TailN {
			d, err := exec("x + 1")
			if err != nil {
				return err
			}
			r.loaded = append(r.loaded, d)
		}
		s1, err := readCPUStat(kernel)
		r.loadedCPU = s1.sub(s0)
		k1, _ := host.CgroupRunQueue(kernel)
		r.loadedWait, r.loadedSrvWait = k1.Since(k0), serverRunQueue(s).Since(srv0)
		return err
	}()
	r.loadedFor, r.oneShots, r.oneShotBusy = time.Since(begin), int(done.Load()-n0), int(busy.Load())
	stop()
	wg.Wait()
	return r, errors.Join(err, streamErr)
}

// runQueues reads the run-queue wait of the threads of each of the
// server's own sandbox cgroups; one it cannot read is left out.
func runQueues(s *server.Server) map[string]host.RunQueue {
	out := map[string]host.RunQueue{}
	byLang, _ := host.SandboxCgroups(cpuCgroupRoot, s.StateDir())
	for _, ids := range byLang {
		for _, id := range ids {
			if rq, err := host.CgroupRunQueue(filepath.Join(cpuCgroupRoot, id)); err == nil {
				out[id] = rq
			}
		}
	}
	return out
}

// serverRunQueue reads the run-queue wait of the server's threads (none
// when it cannot).
func serverRunQueue(s *server.Server) host.RunQueue {
	rq, _ := host.ProcessRunQueue(s.PID())
	return rq
}

// cpuStats reads cpu.stat of the server's own sandbox cgroups.
func cpuStats(s *server.Server) (map[string]cpuStat, error) {
	byLang, err := host.SandboxCgroups(cpuCgroupRoot, s.StateDir())
	if err != nil {
		return nil, err
	}
	out := map[string]cpuStat{}
	for _, ids := range byLang {
		for _, id := range ids {
			if st, err := readCPUStat(filepath.Join(cpuCgroupRoot, id)); err == nil {
				out[id] = st
			}
		}
	}
	return out, nil
}

// busiest is the cgroup, of those in both snapshots, that was active in
// the most CFS periods between them, and its cpu.stat over that span.
func busiest(before, after map[string]cpuStat) (string, cpuStat, error) {
	best, bestSt := "", cpuStat{}
	for id, st := range after {
		b, ok := before[id]
		if !ok {
			continue
		}
		if d := st.sub(b); best == "" || d.periods > bestSt.periods {
			best, bestSt = id, d
		}
	}
	if best == "" {
		return "", cpuStat{}, fmt.Errorf("no sandbox cgroup of this server under %s", cpuCgroupRoot)
	}
	return filepath.Join(cpuCgroupRoot, best), bestSt, nil
}

// perCell is d spread over n cells, in microseconds.
func perCell(d time.Duration, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(d.Microseconds()) / float64(n)
}

func readTrim(dir, name string) string {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
