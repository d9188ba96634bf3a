package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/baseline"
	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/chart"
	"github.com/paddock-dev/paddock/benchmarks/internal/doors"
	"github.com/paddock-dev/paddock/benchmarks/internal/egressbench"
	"github.com/paddock-dev/paddock/benchmarks/internal/gatewaybench"
	"github.com/paddock-dev/paddock/benchmarks/internal/hibernate"
	"github.com/paddock-dev/paddock/benchmarks/internal/host"
	"github.com/paddock-dev/paddock/benchmarks/internal/langs"
	"github.com/paddock-dev/paddock/benchmarks/internal/memory"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
	"github.com/paddock-dev/paddock/benchmarks/internal/server"
	"github.com/paddock-dev/paddock/benchmarks/internal/sessions"
	"github.com/paddock-dev/paddock/benchmarks/internal/steady"
	"github.com/paddock-dev/paddock/templates"
)

func main() {
	var o bench.Options
	flag.StringVar(&o.Paddock, "paddock", "bin/paddock", "paddock binary")
	flag.StringVar(&o.Runsc, "runsc", os.Getenv("PADDOCK_RUNSC"), "runsc binary")
	flag.StringVar(&o.Agent, "agent", "bin/paddock-agent", "agent binary")
	flag.BoolVar(&o.Gofer, "gofer", false, "start Paddock's gVisor sandboxes with a gofer process (serve --gofer), as before EROFS images; raw runsc baselines always have one")
	flag.StringVar(&o.Cache, "cache-dir", "/var/cache/paddock", "cache with the built root filesystems (only read: the run keeps its snapshots in a directory of its own)")
	flag.IntVar(&o.Pool, "pool", shippedFloor(), "ready sandboxes per template on the pooled servers (floor and ceiling; default: the templates' own floor); also the idle sandboxes whose memory is read")
	flag.IntVar(&o.WarmN, "warm", 30, "warm-pool samples per probe from a full, idle pool")
	flag.IntVar(&o.BusyN, "busy", 30, "warm-pool samples per probe run back to back, the pool at its floor")
	flag.DurationVar(&o.BusyInterval, "busy-interval", 250*time.Millisecond, "time between the starts of back-to-back warm runs (their steady rate)")
	flag.IntVar(&o.RestoreN, "restore", 10, "snapshot-restore samples per probe (no pool, snapshots on)")
	flag.IntVar(&o.ColdN, "cold", 5, "cold-start samples per probe (no pool, no snapshots; ~2.5 s each for python)")
	flag.IntVar(&o.RawN, "raw", 5, "raw `runsc run` (and, for snapshotted templates, `runsc restore`) samples per probe")
	flag.IntVar(&o.NativeN, "native", 20, "native process samples per probe, from the template's root filesystem and from the host")
	flag.IntVar(&o.SessionN, "session", 200, "session execute samples per language")
	flag.IntVar(&o.E2BN, "e2b", 40, "E2B door create → first result samples, and as many on /v1 (0: skip)")
	flag.IntVar(&o.MCPN, "mcp", 30, "MCP run_code round trips per language, each beside a /v1/run of the same program (0: skip the phase)")
	flag.DurationVar(&o.Settle, "settle", 100*time.Millisecond, "pause between runs that start a sandbox on the request path")
	flag.DurationVar(&o.MemSettle, "mem-settle", 2*time.Second, "how long pools stay idle before their memory is read")
	flag.DurationVar(&o.ThroughputDuration, "throughput-duration", 15*time.Second, "how long each throughput measurement runs (the throughput target in docs/architecture.md asks for ≥ 60 s)")
	flag.IntVar(&o.ThroughputConcurrency, "throughput-concurrency", 2, "runs in flight during the throughput measurements")
	tpLangs := flag.String("throughput-langs", "python,node", "languages whose throughput is measured (empty: none)")
	flag.BoolVar(&o.MemCold, "mem-cold", true, "also read the memory of cold-started pooled python sandboxes (one more server)")
	flag.BoolVar(&o.Runc, "runc", true, "also measure the runc runtime (cold, warm, sessions, idle memory, throughput) for the gVisor ÷ runc headlines")
	flag.IntVar(&o.JupyterN, "jupyter", 200, "Jupyter cell round trips (`x + 1` through @jupyterlab/services) against Paddock and against native Jupyter Server + ipykernel, stock and with TCP_NODELAY (0: none)")
	flag.BoolVar(&o.JupyterOnly, "jupyter-only", false, "run only the Jupyter cell round trips")
	flag.IntVar(&o.SlimN, "slim", 20, "print(1) samples per template, warm and restored, alternating python-slim and python on one server, with their idle memory and snapshot sizes (0: skip)")
	slimOnly := flag.Bool("slim-only", false, "run only the python-slim / python comparison")
	flag.IntVar(&o.NativeRSSN, "native-rss", 3, "interpreters per template started natively from its root filesystem, warmed up and left idle, whose RSS is read: the memory target of a warmed template is built on it (0: skip)")
	flag.BoolVar(&o.MemoryOnly, "memory-only", false, "run only the memory phases: the native RSS, the idle pooled sandboxes of every template on one server, and (with --mem-cold) cold-started python ones")
	flag.IntVar(&o.CPUPhasesN, "cpu-phases", 0, "one-shots per template whose host CPU is split by phase (restore, ping, run, destroy), beside as many raw runsc run + delete (0: skip)")
	flag.BoolVar(&o.CPUOnly, "cpu-phases-only", false, "run only the CPU phases")
	cpuLangs := flag.String("cpu-phases-langs", "", "languages of the CPU phases (empty: all)")
	flag.DurationVar(&o.CPUIdle, "cpu-phases-idle", 0, "how long each sandbox of the CPU phases waits, ready, before its run; its CPU meanwhile is shown apart (0: none)")
	flag.BoolVar(&o.CPURaw, "cpu-phases-raw", true, "measure raw runsc run + delete in the CPU phases too")
	flag.StringVar(&o.Clients, "clients", "doors/clients", "the door clients' directory, npm packages installed (make clients)")
	flag.BoolVar(&o.Steady, "steady", true, "run the steady-state phase: a closed loop of one-shot print(i) runs per template against a server started as `make run` starts it, at each of --steady-clients for --steady-duration, raw runsc run + delete beside it (supersedes the 2-client throughput measurement of the shipped server and the raw run rate)")
	flag.BoolVar(&o.SteadyOnly, "steady-only", false, "run only the steady-state phase")
	flag.BoolVar(&o.SteadyRaw, "steady-raw", true, "measure raw runsc run + delete (same limits) at each steady point")
	flag.BoolVar(&o.SteadyEmpty, "steady-empty", true, "with --steady-raw, also measure empty sandboxes (runsc run /bin/true + delete, same limits) at the highest client count, once per language: the ceiling of one sandbox per run")
	flag.DurationVar(&o.SteadyDuration, "steady-duration", 60*time.Second, "how long each steady point runs")
	steadyClients := flag.String("steady-clients", "1,2,4,8,16", "client counts of the steady phase")
	steadyTemplates := flag.String("steady-templates", "", "templates of the steady phase (empty: every template the server serves, from GET /v1/templates)")
	flag.StringVar(&o.SteadyTxt, "steady-txt", "benchmarks/out/steady.txt", "write the steady tables here (empty: don't)")
	flag.StringVar(&o.SteadyCSV, "steady-csv", "benchmarks/out/steady.csv", "write one CSV row per steady point here (empty: don't)")
	flag.StringVar(&o.SteadyPNG, "steady-png", "benchmarks/out/steady.png", "draw runs/s and p50/p99 against clients, Paddock, raw and empty sandboxes, per template here (empty: don't)")
	flag.IntVar(&o.SessionStartN, "session-start", 40, "session create → first result samples per language, with and without kernel-ready sandboxes in the pool, alternating on two servers (0: skip)")
	flag.BoolVar(&o.SessionStartOnly, "session-start-only", false, "run only the session start phase")
	flag.IntVar(&o.TailN, "session-tail", 3000, "session `x + 1` cells per condition in the session tail phase: idle, then while one-shots stream (0: skip)")
	tailClients := flag.String("session-tail-clients", "1,4,16", "one-shot client counts of the session tail phase: at each, the session cells while that many clients stream `print(1)`, and their one-shot rate with a busy session and without")
	flag.IntVar(&o.TailTurns, "session-tail-turns", 2, "one-shot windows per client count in the session tail phase with a busy session, and as many without, in turns (0: no one-shot rate)")
	flag.DurationVar(&o.TailWindow, "session-tail-window", 10*time.Second, "how long each one-shot window of the session tail phase runs (0: no one-shot rate)")
	flag.IntVar(&o.TailRounds, "session-tail-rounds", 1, "rounds of the session tail phase; each round measures every binary once")
	flag.StringVar(&o.TailBefore, "session-tail-before", "", "another paddock binary (an earlier build) measured in the session tail phase in alternation with --paddock, for a before/after in one run; a paddock-agent beside it is its agent")
	tailServe := flag.String("session-tail-serve", "", "more `paddock serve` flags for the session tail phase's servers, space-separated (e.g. --busy-start-budget=0, to see what the start cap does)")
	flag.BoolVar(&o.TailOnly, "session-tail-only", false, "run only the session tail phase")
	flag.IntVar(&o.HistoryN, "history", 200, "warm print(1) samples per server in the history phase: two python servers, the history store on (SQLite) and off, alternating (0: skip the phase)")
	flag.IntVar(&o.GraphQLN, "graphql", 200, "GraphQL queries (50 runs and the pools) timed on the history phase's server with the history on, the same document each time (the parse cache warm) and a new one each time (cold), alternating (0: none)")
	flag.IntVar(&o.HistoryClients, "history-clients", 4, "closed-loop clients of the history phase's throughput part")
	flag.DurationVar(&o.HistoryDuration, "history-duration", 30*time.Second, "closed-loop time per server in the history phase, in two alternating turns (0: no throughput part)")
	flag.BoolVar(&o.HistoryOnly, "history-only", false, "run only the history phase")
	flag.IntVar(&o.HibernateN, "hibernate", 20, "session hibernation rounds per template (python, node), idle and beside a busy session: pause, resume, first cell, pause, a cell that wakes it (0: skip the phase)")
	flag.IntVar(&o.HibernateCold, "hibernate-cold", 5, "cold session starts (no pool, no snapshots) per template in the hibernation phase, taken in turns with its idle rounds: the resume's baseline")
	flag.IntVar(&o.HibernateSessions, "hibernate-sessions", 50, "python sessions the hibernation phase opens at once, reads live, then hibernates all (about 80 MiB of memory, then 65 MiB of disk, each; raise it to measure closer to the machine's ceiling; 0: none)")
	flag.BoolVar(&o.HibernateOnly, "hibernate-only", false, "run only the hibernation phase")
	flag.IntVar(&o.EgressRounds, "egress", 3, "rounds of the egress phase's downloads from a stand-in internet in a namespace of the bench's own: each round, the same Python client once from the host and once in a networked sandbox per path (its proxy by CONNECT and by plain HTTP, and direct to the egress namespace), each a small download 1+5 times and a large one twice (0: skip the phase)")
	flag.IntVar(&o.EgressStarts, "egress-starts", 40, "print(1) samples per start mode in the egress phase: networked, started for it with its own limits and no network, pooled (0: none)")
	egressBig := flag.Int64("egress-big-mib", 64, "MiB of the egress phase's large download")
	egressSmall := flag.Int64("egress-small-kib", 1024, "KiB of the egress phase's small download")
	flag.BoolVar(&o.EgressOnly, "egress-only", false, "run only the egress phase")
	flag.IntVar(&o.GatewayN, "gateway", 500, "GET /v1/templates round trips through a gateway over three local nodes and as many straight to one of them (signed), in turns, for the gateway's added latency; then one-shots at each --gateway-clients through the gateway against that node alone (0: skip the phase)")
	gatewayClients := flag.String("gateway-clients", "4,8", "client counts of the gateway phase's one-shots")
	flag.DurationVar(&o.GatewayDuration, "gateway-duration", 10*time.Second, "each one-shot window of the gateway phase (0: no one-shots)")
	flag.IntVar(&o.GatewayTurns, "gateway-turns", 2, "one-shot windows per client count through the gateway, and as many on one node, in turns")
	flag.IntVar(&o.GatewayPool, "gateway-pool", 2, "python pool of each node in the gateway phase (floor and ceiling)")
	flag.BoolVar(&o.GatewayOnly, "gateway-only", false, "run only the gateway phase")
	flag.StringVar(&o.JSONOut, "json", "benchmarks/out/bench.json", "write the report with every raw sample here as JSON (empty: don't)")
	flag.StringVar(&o.CSVOut, "csv", "benchmarks/out/bench.csv", "write every raw sample here as CSV (empty: don't)")
	flag.StringVar(&o.PNGOut, "png", "benchmarks/out/bench.png", "draw the p50s here as a PNG chart (empty: don't)")
	flag.Parse()
	o.EgressBig, o.EgressSmall = *egressBig<<20, *egressSmall<<10
	o.ThroughputLangs = splitList(*tpLangs)
	o.SlimOnly = *slimOnly
	o.SteadyTemplates = splitList(*steadyTemplates)
	var err error
	if o.SteadyClients, err = parseClients(*steadyClients); err != nil {
		fmt.Fprintln(os.Stderr, "bench: --steady-clients:", err)
		os.Exit(2)
	}
	if o.SteadyDuration <= 0 {
		fmt.Fprintln(os.Stderr, "bench: --steady-duration must be positive")
		os.Exit(2)
	}
	if o.TailClients, err = parseClients(*tailClients); err != nil {
		fmt.Fprintln(os.Stderr, "bench: --session-tail-clients:", err)
		os.Exit(2)
	}
	o.TailServe = strings.Fields(*tailServe)
	if o.GatewayClients, err = parseClients(*gatewayClients); err != nil {
		fmt.Fprintln(os.Stderr, "bench: --gateway-clients:", err)
		os.Exit(2)
	}
	o.CPULangs = splitList(*cpuLangs)
	o.Flags = map[string]any{}
	flag.VisitAll(func(f *flag.Flag) { o.Flags[f.Name] = f.Value.String() })

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// parseClients reads a comma-separated list of positive client counts.
func parseClients(v string) ([]int, error) {
	var out []int
	for _, f := range splitList(v) {
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive count", f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no client counts")
	}
	return out, nil
}

// shippedFloor is the largest pool floor the templates ship with.
func shippedFloor() int {
	n := 0
	for _, l := range langs.All {
		if t, err := templates.Get(l.Name); err == nil {
			n = max(n, t.PoolSize)
		}
	}
	return n
}

// run measures every phase it can: a failed phase is reported at the end
// and the others still run, so that one broken mode does not hide the
// rest. Each `paddock serve` runs alone, and the baselines run with no
// server up.
func run(ctx context.Context, o bench.Options) error {
	if err := server.CheckServeFlags(ctx, o.Paddock); err != nil {
		return err
	}
	for _, name := range o.ThroughputLangs {
		if _, ok := langs.ByName(name); !ok {
			return fmt.Errorf("--throughput-langs: unknown language %q", name)
		}
	}
	dir, err := os.MkdirTemp("", "paddock-bench-snapshots-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	o.Snapshots = dir
	if o.TailOnly {
		return sessions.TailPhase(ctx, o, os.Stdout, nil)
	}
	started := time.Now()
	var rep report.Report
	var errs []error
	all := func(name string, f func() error) {
		if ctx.Err() != nil {
			return
		}
		begin := time.Now()
		bench.Progress("%s…", name)
		if err := f(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			bench.Progress("%s failed: %v", name, err)
			return
		}
		bench.Progress("%s done in %s", name, time.Since(begin).Round(100*time.Millisecond))
	}
	phase := all

	cg, err := host.DetectCgroups("/sys/fs/cgroup")
	if err != nil {
		rep.MemoryNote = "memory not measured: " + err.Error()
	}
	rs := baseline.NewRuntimes(o)
	defer rs.Close()

	// Each --X-only flag names the phases it keeps by their titles'
	// beginnings; with any of them set, only those phases run.
	var only []string
	for on, prefix := range map[*bool]string{&o.JupyterOnly: "Jupyter", &o.SteadyOnly: "steady", &o.SlimOnly: "python-slim", &o.CPUOnly: "CPU", &o.SessionStartOnly: sessions.StartTitle, &o.MemoryOnly: "memory", &o.HistoryOnly: historyTitle, &o.HibernateOnly: hibernate.Title, &o.EgressOnly: egressbench.Title, &o.GatewayOnly: gatewaybench.Title} {
		if *on {
			only = append(only, prefix)
		}
	}
	o.Steady = o.Steady || o.SteadyOnly
	if len(only) > 0 {
		phase = func(name string, f func() error) {
			for _, prefix := range only {
				if strings.HasPrefix(name, prefix) {
					all(name, f)
					return
				}
			}
		}
	}
	if o.CPUPhasesN > 0 {
		phase("CPU per phase of a one-shot (in-process runtime, no server)", func() error { return cpuPhase(ctx, o, os.Stdout) })
	}
	phase("native baselines (the templates' interpreters from their root filesystems, then the host's)", func() error { return baseline.NativePhase(ctx, o, &rep) })
	if o.NativeRSSN > 0 {
		phase("memory: native RSS of each template's interpreter, warmed up and idle (its root filesystem, no sandbox)", func() error { return memory.NativeRSSPhase(ctx, o, &rep) })
	}
	if o.MemoryOnly {
		phase("memory: idle pooled sandboxes of every template on one server (snapshots on)", func() error { return memory.Phase(ctx, o, cg, &rep) })
	}
	phase("raw runsc baselines (Paddock's limits, delete included)", func() error { return baseline.RawPhase(ctx, rs, o, &rep) })
	phase(fmt.Sprintf("pooled server (pool %d, snapshots on): warm idle and busy, sessions, memory", o.Pool), func() error { return pooledPhase(ctx, o, cg, &rep) })
	switch {
	case o.Steady:
		phase(fmt.Sprintf("steady state (server as `make run` ships it, %s per point, clients %v, raw runsc beside: %v)", o.SteadyDuration, o.SteadyClients, o.SteadyRaw), func() error {
			err := steady.Phase(ctx, o, rs, &rep)
			// Its points at --throughput-concurrency stand for the
			// throughput of the shipped server and the raw run rate.
			for _, t := range report.SteadyThroughput(rep.Steady, o.ThroughputConcurrency) {
				if slices.Contains(o.ThroughputLangs, t.Lang) {
					rep.Throughput = append(rep.Throughput, t)
				}
			}
			return err
		})
	case len(o.ThroughputLangs) > 0:
		phase("server as shipped (adaptive pools, snapshots on): throughput", func() error { return shippedPhase(ctx, o, &rep) })
	}
	if o.TailN > 0 {
		phase(fmt.Sprintf("session tail (x + 1 idle, then while each of %v clients streams one-shots; their rate beside a busy session)", o.TailClients), func() error { return sessions.TailPhase(ctx, o, os.Stdout, &rep) })
	}
	if o.E2BN > 0 {
		phase("E2B door against /v1 (pool "+strconv.Itoa(o.Pool)+", snapshots on): create → first result", func() error { return doors.E2BPhase(ctx, o, &rep) })
	}
	if o.MCPN > 0 {
		phase("MCP door: run_code against /v1/run (pooled, snapshots on)", func() error { return doors.MCPPhase(ctx, o, &rep) })
	}
	phase("snapshot restores on the request path (pool 0, snapshots on)", func() error { return restorePhase(ctx, o, &rep) })
	phase("cold starts (pool 0, snapshots off)", func() error { return coldPhase(ctx, o, &rep) })
	if o.MemCold {
		phase("memory of cold-started pooled python sandboxes (snapshots off)", func() error { return memory.ColdPhase(ctx, o, cg, &rep) })
	}
	if o.SlimN > 0 {
		phase("python-slim beside python: warm and restored print(1), idle memory, snapshot sizes", func() error { return slimPhase(ctx, o, cg, &rep) })
	}
	phase("raw runsc rates (restore and run, delete included)", func() error { return baseline.RawRatePhase(ctx, rs, o, &rep) })
	if o.Runc {
		phase("the same on runc (plain containers, the host's kernel): cold, warm, sessions, memory, throughput", func() error { return runcPhase(ctx, o, cg, &rep) })
	}
	if o.SessionStartN > 0 {
		phase(sessions.StartTitle, func() error { return sessions.StartPhase(ctx, o, &rep) })
	}
	if o.HistoryN > 0 {
		phase(historyTitle, func() error { return historyPhase(ctx, o, &rep) })
	}
	if o.HibernateN > 0 {
		phase(hibernate.Title, func() error { return hibernate.Phase(ctx, o, cg, &rep) })
	}
	if o.EgressRounds > 0 || o.EgressStarts > 0 {
		phase(egressbench.Title, func() error { return egressbench.Phase(ctx, o, &rep) })
	}
	if o.GatewayN > 0 {
		phase(gatewaybench.Title, func() error { return gatewaybench.Phase(ctx, o, &rep) })
	}
	if o.JupyterN > 0 {
		phase("Jupyter cell round trips: Paddock's Jupyter door, then native Jupyter Server + ipykernel, stock and with TCP_NODELAY", func() error { return doors.JupyterPhase(ctx, o, &rep) })
	}
	if ctx.Err() != nil {
		errs = append(errs, ctx.Err())
	}

	report.SortRows(rep.Rows)
	rep.Print(os.Stdout)
	report.PrintSteady(os.Stdout, rep.Steady)
	title := fmt.Sprintf("Paddock make bench, %s: p50 time to first result (log scale)", started.UTC().Format("2006-01-02 15:04 UTC"))
	errs = append(errs,
		report.WriteFile(o.JSONOut, func(w io.Writer) error { return report.WriteJSON(w, rep, started, o.Flags) }),
		report.WriteFile(o.CSVOut, func(w io.Writer) error { return report.WriteCSV(w, rep) }),
		report.WriteFile(o.PNGOut, func(w io.Writer) error { return chart.WriteLatency(w, title, rep.Rows) }))
	outs := []string{o.JSONOut, o.CSVOut, o.PNGOut}
	if len(rep.Steady) > 0 {
		steadyStarted := started.UTC().Format("2006-01-02 15:04 UTC")
		errs = append(errs,
			report.WriteFile(o.SteadyTxt, func(w io.Writer) error { report.PrintSteady(w, rep.Steady); return nil }),
			report.WriteFile(o.SteadyCSV, func(w io.Writer) error { return report.WriteSteadyCSV(w, rep.Steady) }),
			report.WriteFile(o.SteadyPNG, func(w io.Writer) error {
				return chart.WriteSteady(w, report.SteadyTitle(steadyStarted, rep.Steady), rep.Steady)
			}))
		outs = append(outs, o.SteadyTxt, o.SteadyCSV, o.SteadyPNG)
	}
	for _, p := range outs {
		if p != "" {
			fmt.Println("wrote", p)
		}
	}
	return errors.Join(errs...)
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
