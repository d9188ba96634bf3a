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
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/host"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
	"github.com/paddock-dev/paddock/benchmarks/internal/server"
)

// The session tail phase: a Python session's `x + 1` back to back on an
// idle server, then again while each count of clients streams one-shots
// at the server's capacity, with the kernel sandbox's CFS throttling read
// from its cgroup; then the one-shots' rate at each count with a second
// session busy beside them and without.

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
	idle                 []time.Duration
	idleCPU              cpuStat
	kernelShares, kBurst string
	kernelCPUs           string // its cpuset
	// Run-queue wait (host.RunQueue) over the idle cells, summed over
	// the kernel sandbox's threads and over the server's.
	idleWait, idleSrvWait time.Duration
	loaded                []loadedCells  // one per client count
	oneShots              []oneShotRates // one per client count, if measured
}

// cpuCgroupRoot holds the gVisor sandboxes' cgroups in the cpu hierarchy.
const cpuCgroupRoot = "/sys/fs/cgroup/cpu/paddock"

// TailPhase measures the session tail of o.Paddock (and of
// o.TailBefore, alternating, when set) o.TailRounds times, prints its
// tables to w and, with rep, adds its results to it.
func TailPhase(ctx context.Context, o bench.Options, w io.Writer, rep *report.Report) error {
	if len(o.TailClients) == 0 {
		return errors.New("session tail: no client counts")
	}
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
	if rep != nil {
		for _, r := range res {
			rep.SessionTail = append(rep.SessionTail, reportOf(r))
		}
	}
	loadAvg, _ := os.ReadFile("/proc/loadavg")
	return printTail(w, o, res, strings.TrimSpace(string(loadAvg)))
}

// measureTail starts a pooled Python server from o.Paddock and measures
// its session tail idle and at each of o.TailClients, then the one-shot
// rate at each beside a busy session and without.
func measureTail(ctx context.Context, o bench.Options) (r tailResult, err error) {
	s, err := server.Start(ctx, o, server.Config{Name: "session tail", Templates: []string{"python"}, Pool: o.Pool, Snapshots: true, Extra: o.TailServe})
	if err != nil {
		return r, err
	}
	defer func() { err = errors.Join(err, s.Stop()) }()
	if err := s.AwaitFull(ctx, "python"); err != nil {
		return r, err
	}
	id, err := openSession(ctx, s)
	if err != nil {
		return r, err
	}
	defer closeSession(ctx, s, id)
	exec := func(code string) (time.Duration, error) {
		var resp struct {
			Status string `json:"status"`
		}
		start := time.Now()
		if err := s.PostJSON(ctx, "/v1/sessions/"+id+"/execute", map[string]any{"code": code}, http.StatusOK, &resp); err != nil {
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
	// The busy session is open, and idle, from the start: the one-shot
	// windows without it differ from those with it only by its loop.
	var busy *busySession
	if measuresOneShots(o) {
		if busy, err = openBusySession(ctx, s); err != nil {
			return r, err
		}
		defer busy.close(ctx)
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

	for _, c := range o.TailClients {
		// Each count starts from a full pool.
		if err := s.AwaitFull(ctx, "python"); err != nil {
			return r, err
		}
		bench.Progress("session tail: %d cells while %d clients stream one-shots", o.TailN, c)
		l, err := measureLoaded(ctx, s, kernel, c, o.TailN, exec)
		if err != nil {
			return r, fmt.Errorf("%d clients: %w", c, err)
		}
		r.loaded = append(r.loaded, l)
	}
	if busy == nil {
		return r, nil
	}
	for _, c := range o.TailClients {
		t, err := measureOneShots(ctx, s, busy, c, o.TailTurns, o.TailWindow)
		if err != nil {
			return r, fmt.Errorf("one-shots, %d clients: %w", c, err)
		}
		r.oneShots = append(r.oneShots, t)
	}
	return r, nil
}

// measuresOneShots says whether the phase counts one-shots beside a busy
// session.
func measuresOneShots(o bench.Options) bool { return o.TailTurns > 0 && o.TailWindow > 0 }

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
