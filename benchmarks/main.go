package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/paddock-dev/paddock/templates"
)

type options struct {
	paddock, runsc, agent, cache string
	// snapshots is the servers' snapshot directory, private to the run:
	// servers of other checkouts sharing the cache's would prune its
	// images as outdated, and the first server's image serves the rest.
	snapshots string

	pool                    int // pool floor and ceiling of the pooled servers
	warmN, restoreN, coldN  int
	rawN, nativeN, sessionN int
	e2bN                    int
	mcpN                    int
	busyN                   int
	busyInterval            time.Duration
	settle, memSettle       time.Duration
	tpDuration              time.Duration
	tpConcurrency           int
	tpLangs                 []string
	memCold                 bool
	runc                    bool
	jsonOut, csvOut, pngOut string
	jupyterN                int    // Jupyter cell round trips per stack (0: none)
	clients                 string // doors/clients, with its npm packages installed
	jupyterOnly             bool   // run only the Jupyter phase

	flags map[string]any // every flag's value, for the JSON
}

func main() {
	var o options
	flag.StringVar(&o.paddock, "paddock", "bin/paddock", "paddock binary")
	flag.StringVar(&o.runsc, "runsc", os.Getenv("PADDOCK_RUNSC"), "runsc binary")
	flag.StringVar(&o.agent, "agent", "bin/paddock-agent", "agent binary")
	flag.StringVar(&o.cache, "cache-dir", "/var/cache/paddock", "cache with the built root filesystems (only read: the run keeps its snapshots in a directory of its own)")
	flag.IntVar(&o.pool, "pool", shippedFloor(), "ready sandboxes per template on the pooled servers (floor and ceiling; default: the templates' own floor); also the idle sandboxes whose memory is read")
	flag.IntVar(&o.warmN, "warm", 30, "warm-pool samples per probe from a full, idle pool")
	flag.IntVar(&o.busyN, "busy", 30, "warm-pool samples per probe run back to back, the pool at its floor")
	flag.DurationVar(&o.busyInterval, "busy-interval", 250*time.Millisecond, "time between the starts of back-to-back warm runs (their steady rate)")
	flag.IntVar(&o.restoreN, "restore", 10, "snapshot-restore samples per probe (no pool, snapshots on)")
	flag.IntVar(&o.coldN, "cold", 5, "cold-start samples per probe (no pool, no snapshots; ~2.5 s each for python)")
	flag.IntVar(&o.rawN, "raw", 5, "raw `runsc run` (and, for snapshotted templates, `runsc restore`) samples per probe")
	flag.IntVar(&o.nativeN, "native", 20, "native process samples per probe, from the template's root filesystem and from the host")
	flag.IntVar(&o.sessionN, "session", 200, "session execute samples per language")
	flag.IntVar(&o.e2bN, "e2b", 40, "E2B door create → first result samples, and as many on /v1 (0: skip)")
	flag.IntVar(&o.mcpN, "mcp", 30, "MCP run_code round trips per language, each beside a /v1/run of the same program (0: skip the phase)")
	flag.DurationVar(&o.settle, "settle", 100*time.Millisecond, "pause between runs that start a sandbox on the request path")
	flag.DurationVar(&o.memSettle, "mem-settle", 2*time.Second, "how long pools stay idle before their memory is read")
	flag.DurationVar(&o.tpDuration, "throughput-duration", 15*time.Second, "how long each throughput measurement runs (the throughput target in docs/architecture.md asks for ≥ 60 s)")
	flag.IntVar(&o.tpConcurrency, "throughput-concurrency", 2, "runs in flight during the throughput measurements")
	tpLangs := flag.String("throughput-langs", "python,node", "languages whose throughput is measured (empty: none)")
	flag.BoolVar(&o.memCold, "mem-cold", true, "also read the memory of cold-started pooled python sandboxes (one more server)")
	flag.BoolVar(&o.runc, "runc", true, "also measure the runc runtime (cold, warm, sessions, idle memory, throughput) for the gVisor ÷ runc headlines")
	flag.IntVar(&o.jupyterN, "jupyter", 200, "Jupyter cell round trips (`x + 1` through @jupyterlab/services) against Paddock and against native Jupyter Server + ipykernel, stock and with TCP_NODELAY (0: none)")
	flag.BoolVar(&o.jupyterOnly, "jupyter-only", false, "run only the Jupyter cell round trips")
	flag.StringVar(&o.clients, "clients", "doors/clients", "the door clients' directory, npm packages installed (make clients)")
	flag.StringVar(&o.jsonOut, "json", "benchmarks/out/bench.json", "write the report with every raw sample here as JSON (empty: don't)")
	flag.StringVar(&o.csvOut, "csv", "benchmarks/out/bench.csv", "write every raw sample here as CSV (empty: don't)")
	flag.StringVar(&o.pngOut, "png", "benchmarks/out/bench.png", "draw the p50s here as a PNG chart (empty: don't)")
	flag.Parse()
	o.tpLangs = splitList(*tpLangs)
	o.flags = map[string]any{}
	flag.VisitAll(func(f *flag.Flag) { o.flags[f.Name] = f.Value.String() })

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// shippedFloor is the largest pool floor the templates ship with.
func shippedFloor() int {
	n := 0
	for _, l := range langs {
		if t, err := templates.Get(l.name); err == nil {
			n = max(n, t.PoolSize)
		}
	}
	return n
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

// run measures every phase it can: a failed phase is reported at the end
// and the others still run, so that one broken mode does not hide the
// rest. Each `paddock serve` runs alone, and the baselines run with no
// server up.
func run(ctx context.Context, o options) error {
	if err := checkServeFlags(ctx, o.paddock); err != nil {
		return err
	}
	for _, name := range o.tpLangs {
		if _, ok := langByName(name); !ok {
			return fmt.Errorf("--throughput-langs: unknown language %q", name)
		}
	}
	dir, err := os.MkdirTemp("", "paddock-bench-snapshots-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	o.snapshots = dir
	started := time.Now()
	var rep report
	var errs []error
	all := func(name string, f func() error) {
		if ctx.Err() != nil {
			return
		}
		begin := time.Now()
		progress("%s…", name)
		if err := f(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			progress("%s failed: %v", name, err)
			return
		}
		progress("%s done in %s", name, time.Since(begin).Round(100*time.Millisecond))
	}
	phase := all

	cg, err := detectMemCgroups("/sys/fs/cgroup")
	if err != nil {
		rep.MemoryNote = "memory not measured: " + err.Error()
	}
	rs := &rawRuntimes{o: o}
	defer rs.close()

	if o.jupyterOnly {
		phase = func(name string, f func() error) {
			if strings.HasPrefix(name, "Jupyter") {
				all(name, f)
			}
		}
	}
	if *sessionStartOnly {
		phase = func(name string, f func() error) {
			if name == sessionStartTitle {
				all(name, f)
			}
		}
	}
	phase("native baselines (the templates' interpreters from their root filesystems, then the host's)", func() error { return nativePhase(ctx, o, &rep) })
	phase("raw runsc baselines (Paddock's limits, delete included)", func() error { return rawPhase(ctx, rs, o, &rep) })
	phase(fmt.Sprintf("pooled server (pool %d, snapshots on): warm idle and busy, sessions, memory", o.pool), func() error { return pooledPhase(ctx, o, cg, &rep) })
	if len(o.tpLangs) > 0 {
		phase("server as shipped (adaptive pools, snapshots on): throughput", func() error { return shippedPhase(ctx, o, &rep) })
	}
	if o.e2bN > 0 {
		phase("E2B door against /v1 (pool "+strconv.Itoa(o.pool)+", snapshots on): create → first result", func() error { return e2bPhase(ctx, o, &rep) })
	}
	if o.mcpN > 0 {
		phase("MCP door: run_code against /v1/run (pooled, snapshots on)", func() error { return mcpPhase(ctx, o, &rep) })
	}
	phase("snapshot restores on the request path (pool 0, snapshots on)", func() error { return restorePhase(ctx, o, &rep) })
	phase("cold starts (pool 0, snapshots off)", func() error { return coldPhase(ctx, o, &rep) })
	if o.memCold {
		phase("memory of cold-started pooled python sandboxes (snapshots off)", func() error { return coldMemoryPhase(ctx, o, cg, &rep) })
	}
	phase("raw runsc rates (restore and run, delete included)", func() error { return rawRatePhase(ctx, rs, o, &rep) })
	if o.runc {
		phase("the same on runc (plain containers, the host's kernel): cold, warm, sessions, memory, throughput", func() error { return runcPhase(ctx, o, cg, &rep) })
	}
	if *sessionStartN > 0 {
		phase(sessionStartTitle, func() error { return sessionStartPhase(ctx, o, &rep) })
	}
	if o.jupyterN > 0 {
		phase("Jupyter cell round trips: Paddock's Jupyter door, then native Jupyter Server + ipykernel, stock and with TCP_NODELAY", func() error { return jupyterPhase(ctx, o, &rep) })
	}
	if ctx.Err() != nil {
		errs = append(errs, ctx.Err())
	}

	sortRows(rep.Rows)
	rep.print(os.Stdout)
	title := fmt.Sprintf("Paddock make bench, %s: p50 time to first result (log scale)", started.UTC().Format("2006-01-02 15:04 UTC"))
	errs = append(errs,
		writeFile(o.jsonOut, func(w io.Writer) error { return writeJSON(w, rep, started, o.flags) }),
		writeFile(o.csvOut, func(w io.Writer) error { return writeCSV(w, rep) }),
		writeFile(o.pngOut, func(w io.Writer) error { return writeChart(w, title, rep.Rows) }))
	for _, p := range []string{o.jsonOut, o.csvOut, o.pngOut} {
		if p != "" {
			fmt.Println("wrote", p)
		}
	}
	return errors.Join(errs...)
}
