package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/baseline"
	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/langs"
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
	"github.com/paddock-dev/paddock/rootfs"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/ocispec"
	"github.com/paddock-dev/paddock/runner/runsc"
	"github.com/paddock-dev/paddock/templates"
)

// The CPU phases split the host CPU one pooled one-shot costs into the
// steps the pool and the runtime take for it, read from the kernel:
//
//   - the rusage of each runsc command the runtime execs (runsc.Observe),
//   - the sandbox's own cpuacct cgroup (its sandbox, gofer and systrap
//     stubs), read when each step ends; while the sandbox dies its cgroup
//     is removed, so the destroy step reads the parent cgroup instead and
//     takes away what the parent's other children spent meanwhile,
//   - the bench process's own rusage, which stands for the server's side
//     (bundles, pipes, the agent protocol).
//
// The runtime is driven in-process, one sandbox at a time, so that the
// steps do not overlap. A runsc command joins the sandbox's cgroup for
// the moment it starts the sandbox and gofer, so that moment counts twice.

// cpuStep is one step of a one-shot.
type cpuStep int

const (
	stepUp      cpuStep = iota // runsc restore or run, until it returns
	stepReady                  // the first ping (and reseed) or the handshake
	stepIdle                   // waiting in the pool (only with --cpu-phases-idle)
	stepRun                    // the run itself
	stepDestroy                // runsc delete, the bundle, the cgroups
	stepCount
)

var stepNames = [stepCount]string{"restore/start", "ping+reseed/hello", "idle in the pool", "run", "destroy+cleanup"}

// cpuSplit is the CPU of one step by where it was spent.
type cpuSplit struct {
	runsc, sandbox, self time.Duration
	wall                 time.Duration
	valid                bool // false when the parent cgroup changed under the step
}

func (c cpuSplit) total() time.Duration { return c.runsc + c.sandbox + c.self }

// cpuSample is one one-shot.
type cpuSample [stepCount]cpuSplit

// cpuPhase measures n one-shots of each template, then n raw `runsc run` +
// delete of its interpreter under the same limits, and prints the tables.
func cpuPhase(ctx context.Context, o bench.Options, w io.Writer) error {
	cg := cpuCgroup{root: "/sys/fs/cgroup/cpuacct" + ocispec.CgroupParent}
	if _, err := cg.usage(""); err != nil {
		return fmt.Errorf("reading the sandboxes' parent cgroup (cgroup v1 cpuacct): %w", err)
	}
	dir, err := os.MkdirTemp("", "paddock-cpu-phases-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var out []cpuTable
	all, err := templates.All()
	if err != nil {
		return err
	}
	for _, l := range langs.All {
		if len(o.CPULangs) > 0 && !slices.Contains(o.CPULangs, l.Name) {
			continue
		}
		var p langs.Probe
		for _, pr := range l.Probes {
			if pr.Trivial {
				p = pr
			}
		}
		// Every built-in template of the language (python-slim beside
		// python), then raw runsc of its interpreter once.
		for _, tmpl := range all {
			if tmpl.Language != l.Name {
				continue
			}
			spec, err := cpuSpec(o, tmpl.Name)
			if err != nil {
				return err
			}
			rt, err := newCPURuntime(ctx, o, filepath.Join(dir, tmpl.Name), spec, tmpl.Snapshot, cg)
			if err != nil {
				return fmt.Errorf("%s: %w", tmpl.Name, err)
			}
			defer rt.close()
			t := cpuTable{lang: tmpl.Name, variant: "Paddock", kind: rt.kind()}
			for i := range o.CPUPhasesN + 1 {
				s, err := rt.oneShot(ctx, p)
				if err != nil {
					return fmt.Errorf("%s: %w", tmpl.Name, err)
				}
				if i > 0 { // the first warms the caches
					t.samples = append(t.samples, s)
				}
			}
			out = append(out, t)
		}
		if !o.CPURaw {
			continue
		}
		raw, err := rawCPU(ctx, o, l, cg, "raw runsc", "runsc run + delete of the interpreter, same limits",
			l.Sandboxed(p.Code), p.OK)
		if err != nil {
			return fmt.Errorf("%s raw runsc: %w", l.Name, err)
		}
		empty, err := rawCPU(ctx, o, l, cg, "empty sandbox", "runsc run + delete of /bin/true, same limits (the least one sandbox per run costs)",
			baseline.EmptyProgram, langs.Prints(""))
		if err != nil {
			return fmt.Errorf("%s empty sandbox: %w", l.Name, err)
		}
		out = append(out, raw, empty)
	}
	for _, t := range out {
		t.print(w)
	}
	return nil
}

// cpuSpec is the spec a server gives the template's pooled sandboxes.
func cpuSpec(o bench.Options, name string) (runner.Spec, error) {
	t, err := templates.Get(name)
	if err != nil {
		return runner.Spec{}, err
	}
	img, err := (&rootfs.Builder{CacheDir: o.Cache}).Lookup(t)
	if err != nil {
		return runner.Spec{}, fmt.Errorf("root filesystem of %s: %w (run `make rootfs`)", name, err)
	}
	return runner.Spec{Template: t.Name, Language: t.Language, Rootfs: img.Path,
		RootfsID: img.Key + "@" + img.BuiltAt.UTC().Format(time.RFC3339Nano),
		Warmup:   t.Warmup, Limits: baseline.TemplateLimits(t.Limits)}, nil
}

// cpuRuntime is one gVisor runtime of the bench's own, with a hook on its
// runsc commands.
type cpuRuntime struct {
	rt   *runsc.Runtime
	spec runner.Spec
	img  *runner.Snapshot // nil: cold starts
	cg   cpuCgroup
	idle time.Duration // how long a sandbox waits between ready and run

	// set by the hook when runsc restore or run returns
	upRunsc  time.Duration
	upWall   time.Duration
	upCgroup time.Duration
	upSelf   time.Duration
	// runsc delete's
	delRunsc time.Duration
}

func newCPURuntime(ctx context.Context, o bench.Options, dir string, spec runner.Spec, snapshot bool, cg cpuCgroup) (*cpuRuntime, error) {
	agent, err := filepath.Abs(o.Agent)
	if err != nil {
		return nil, err
	}
	rt, err := runsc.New(runsc.Config{Runsc: o.Runsc, StateDir: dir, Agent: agent, Platform: baseline.Platform,
		SnapshotDir: filepath.Join(dir, "snapshots"), Gofer: o.Gofer})
	if err != nil {
		return nil, err
	}
	c := &cpuRuntime{rt: rt, spec: spec, cg: cg, idle: o.CPUIdle}
	if snapshot {
		img, err := rt.Snapshot(ctx, spec)
		if err != nil {
			return nil, errors.Join(err, rt.Close())
		}
		c.img = &img
	}
	rt.Runsc().Observe = c.observe
	return c, nil
}

func (c *cpuRuntime) kind() string {
	if c.img != nil {
		return fmt.Sprintf("pooled, snapshot restore (image %.1f MiB)", float64(c.img.Bytes)/(1<<20))
	}
	return "pooled, cold start"
}

// observe runs in the runtime's goroutine as each runsc command returns.
func (c *cpuRuntime) observe(inv runsc.Invocation) {
	id := inv.Argv[len(inv.Argv)-1]
	switch sub(inv.Argv) {
	case "restore", "run":
		c.upSelf = selfCPU()
		c.upRunsc, c.upWall = inv.CPU, inv.Wall
		c.upCgroup, _ = c.cg.usage(id)
	case "delete":
		c.delRunsc = inv.CPU
	}
}

// oneShot brings a sandbox up as a pool refill does, runs p on it and
// destroys it, as a one-shot does.
func (c *cpuRuntime) oneShot(ctx context.Context, p langs.Probe) (cpuSample, error) {
	var s cpuSample
	self0, begin := selfCPU(), time.Now()
	var sb runner.Sandbox
	var err error
	if c.img != nil {
		sb, err = c.rt.Restore(ctx, *c.img)
	} else {
		sb, err = c.rt.Start(ctx, c.spec)
	}
	if err != nil {
		return s, err
	}
	ready, self1 := time.Now(), selfCPU()
	id := sb.ID()
	cg1, err := c.cg.usage(id)
	if err != nil {
		return s, errors.Join(err, sb.Destroy(ctx))
	}
	s[stepUp] = cpuSplit{runsc: c.upRunsc, sandbox: c.upCgroup, self: c.upSelf - self0, wall: c.upWall, valid: true}
	s[stepReady] = cpuSplit{sandbox: cg1 - c.upCgroup, self: self1 - c.upSelf, wall: ready.Sub(begin) - c.upWall, valid: true}
	if c.idle > 0 {
		// Idle: what a ready sandbox costs while it waits for a run. Its
		// CPU is not part of the one-shot's (see cpuTable.print).
		select {
		case <-ctx.Done():
		case <-time.After(c.idle):
		}
		cg, err := c.cg.usage(id)
		if err != nil {
			return s, errors.Join(err, sb.Destroy(ctx))
		}
		s[stepIdle] = cpuSplit{sandbox: cg - cg1, wall: time.Since(ready), valid: true}
		ready, self1, cg1 = time.Now(), selfCPU(), cg
	}

	var stdout strings.Builder
	res, err := sb.Run(ctx, runner.RunRequest{Code: p.Code, Timeout: time.Minute, MaxStdout: 1 << 20, MaxStderr: 1 << 20},
		func(st runner.Stream, b []byte) {
			if st == runner.Stdout {
				stdout.Write(b)
			}
		})
	ran, self2 := time.Now(), selfCPU()
	cg2, cgErr := c.cg.usage(id)
	if err == nil && !p.OK(stdout.String()) {
		err = fmt.Errorf("%s: stdout %q, reason %s", p.Name, stdout.String(), res.Reason)
	}
	if err = errors.Join(err, cgErr); err != nil {
		return s, errors.Join(err, sb.Destroy(ctx))
	}
	s[stepRun] = cpuSplit{sandbox: cg2 - cg1, self: self2 - self1, wall: ran.Sub(ready), valid: true}

	before := c.cg.children()
	self3 := selfCPU()
	err = sb.Destroy(ctx)
	gone, self4 := time.Now(), selfCPU()
	after := c.cg.children()
	dying, ok := parentShare(before, after, id)
	s[stepDestroy] = cpuSplit{runsc: c.delRunsc, sandbox: dying, self: self4 - self3, wall: gone.Sub(ran), valid: ok}
	return s, err
}

func (c *cpuRuntime) close() { _ = c.rt.Close() }

// cpuCgroup reads the cpuacct cgroups under the sandboxes' parent.
type cpuCgroup struct{ root string }

// usage is the CPU the cgroup id (the parent for "") has used.
func (g cpuCgroup) usage(id string) (time.Duration, error) {
	b, err := os.ReadFile(filepath.Join(g.root, id, "cpuacct.usage"))
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return time.Duration(n), err
}

// cgroupUsages are the usages of the parent ("") and of its children.
type cgroupUsages map[string]time.Duration

func (g cpuCgroup) children() cgroupUsages {
	u := cgroupUsages{}
	u[""], _ = g.usage("")
	ents, _ := os.ReadDir(g.root)
	for _, e := range ents {
		if e.IsDir() {
			if n, err := g.usage(e.Name()); err == nil {
				u[e.Name()] = n
			}
		}
	}
	return u
}

// parentShare is what the parent cgroup used between before and after
// beyond what its other children used: the CPU of child id, whose cgroup
// was removed meanwhile. cpuacct charges every ancestor, so a parent's
// count keeps what a removed child used. ok is false when another child
// came or went meanwhile (another server's sandbox), which spoils it.
func parentShare(before, after cgroupUsages, id string) (time.Duration, bool) {
	d := after[""] - before[""]
	for k, b := range before {
		if k == "" || k == id {
			continue
		}
		a, still := after[k]
		if !still {
			return 0, false
		}
		d -= a - b
	}
	for k := range after {
		if _, was := before[k]; !was && k != id {
			return 0, false
		}
	}
	// The children are read one after another while they run: a child
	// that used nothing can come out a little below zero.
	return max(0, d), true
}

// selfCPU is the bench process's own CPU so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// sub is the subcommand of a runsc argument list.
func sub(argv []string) string {
	for _, a := range argv {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// rawCPU measures n raw `runsc run` + `runsc delete` of argv, whose
// stdout printed must accept, under the limits of l's template. `runsc
// run` waits for its sandbox and gofer, so its rusage holds theirs, which
// also charged the container's cgroup (removed when run returns, hence
// read through the parent): the up step's CPU is the rusage, and the runsc
// column what it has beyond the cgroup's.
func rawCPU(ctx context.Context, o bench.Options, l langs.Lang, cg cpuCgroup, variant, kind string, argv []string, printed func(string) bool) (cpuTable, error) {
	t := cpuTable{lang: l.Name, variant: variant, kind: kind}
	rt, err := baseline.NewRuntime(o, l.Name)
	if err != nil {
		return t, err
	}
	defer rt.Close()
	for i := range o.CPUPhasesN + 1 {
		var s cpuSample
		// A raw run has no steps between up and destroy.
		s[stepReady].valid, s[stepIdle].valid, s[stepRun].valid = true, true, true
		id := baseline.NewID()
		self0, begin := selfCPU(), time.Now()
		bundle, err := rt.Bundle(id, argv)
		if err != nil {
			return t, err
		}
		before := cg.children()
		cmd := rt.Command(ctx, true, "run", "--bundle="+bundle, id)
		out, runErr := baseline.Output(ctx, cmd)
		ran, self1 := time.Now(), selfCPU()
		box, ok := parentShare(before, cg.children(), id)
		if runErr == nil && !printed(out) {
			runErr = fmt.Errorf("stdout %q", out)
		}
		var runCPU time.Duration
		if cmd.ProcessState != nil {
			runCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		}
		// runsc run reaped the sandbox and gofer: its rusage holds theirs.
		// Where the parent could not be read, the split is unknown and
		// all of it shows as runsc's.
		s[stepUp] = cpuSplit{runsc: runCPU, self: self1 - self0, wall: ran.Sub(begin), valid: true}
		if ok && box <= runCPU {
			s[stepUp].runsc, s[stepUp].sandbox = runCPU-box, box
		}

		before = cg.children()
		del := rt.Command(ctx, false, "delete", "--force", id)
		delErr := del.Run()
		rmErr := rt.RemoveBundle(id)
		gone, self2 := time.Now(), selfCPU()
		dying, ok := parentShare(before, cg.children(), id)
		var delCPU time.Duration
		if del.ProcessState != nil {
			delCPU = del.ProcessState.UserTime() + del.ProcessState.SystemTime()
		}
		s[stepDestroy] = cpuSplit{runsc: delCPU, sandbox: dying, self: self2 - self1, wall: gone.Sub(ran), valid: ok}
		if err := errors.Join(runErr, delErr, rmErr); err != nil {
			return t, err
		}
		if i > 0 { // the first warms the caches
			t.samples = append(t.samples, s)
		}
	}
	return t, nil
}

// cpuTable is the samples of one template, on Paddock or raw runsc.
type cpuTable struct {
	lang, variant, kind string
	samples             []cpuSample
}

func (t cpuTable) print(w io.Writer) {
	fmt.Fprintf(w, "\n%s, %s: %s, %d one-shots\n", t.lang, t.variant, t.kind, len(t.samples))
	fmt.Fprintf(w, "%-20s %9s %9s %9s %9s %9s %9s\n", "phase", "CPU p50", "CPU mean", "runsc", "sandbox", "server", "wall p50")
	var totals, walls []time.Duration
	for _, smp := range t.samples {
		var c, wl time.Duration
		valid := true
		for st, sp := range smp {
			if cpuStep(st) == stepIdle {
				continue
			}
			c += sp.total()
			wl += sp.wall
			valid = valid && sp.valid
		}
		walls = append(walls, wl)
		if valid {
			totals = append(totals, c)
		}
	}
	var sumOfMeans time.Duration
	for st := range stepCount {
		var all, r, sb, self, wall []time.Duration
		for _, s := range t.samples {
			sp := s[st]
			wall = append(wall, sp.wall)
			if !sp.valid {
				continue
			}
			all, r, sb, self = append(all, sp.total()), append(r, sp.runsc), append(sb, sp.sandbox), append(self, sp.self)
		}
		if len(wall) == 0 || (st == stepReady || st == stepRun) && t.variant != "Paddock" || st == stepIdle && stats.Percentile(wall, 0.5) == 0 {
			continue
		}
		if st != stepIdle {
			sumOfMeans += stats.Mean(all)
		}
		note := ""
		if len(all) < len(wall) {
			note = fmt.Sprintf("  (read in %d of %d samples; in the others, other sandboxes came or went)", len(all), len(wall))
		}
		fmt.Fprintf(w, "%-20s %9s %9s %9s %9s %9s %9s%s\n", stepNames[st], stats.FormatMS(stats.Percentile(all, 0.5)), stats.FormatMS(stats.Mean(all)),
			stats.FormatMS(stats.Mean(r)), stats.FormatMS(stats.Mean(sb)), stats.FormatMS(stats.Mean(self)), stats.FormatMS(stats.Percentile(wall, 0.5)), note)
	}
	// The mean is the sum of the steps' means; the p50 is of the samples
	// whose every step was read.
	fmt.Fprintf(w, "%-20s %9s %9s %9s %9s %9s %9s  (p50 of %d whole samples)\n", "per one-shot", stats.FormatMS(stats.Percentile(totals, 0.5)), stats.FormatMS(sumOfMeans), "", "", "", stats.FormatMS(stats.Percentile(walls, 0.5)), len(totals))
}
