// Command nodestart measures where a Node sandbox's start goes, for two
// agent binaries side by side (before and after a change to how the agent
// starts node), alternating in one process so that both see the same
// machine: a pool refill (runsc run → the agent's hello, the driver
// ready), a one-shot run in it, its destruction, and the sandbox's idle
// memory. Host CPU is read from the kernel: the sandbox's cpuacct cgroup
// (the Sentry and gofer) and this process's reaped children (the runsc
// commands).
//
//	go run ./benchmarks/nodestart -agents old=/tmp/old-agent,new=bin/paddock-agent -n 10
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/paddock-dev/paddock/rootfs"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/ocispec"
	"github.com/paddock-dev/paddock/runner/runsc"
	"github.com/paddock-dev/paddock/templates"
)

var showStat = flag.Bool("stat", false, "print each sandbox's memory.stat at idle")

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "nodestart:", err)
		os.Exit(1)
	}
}

type sample struct {
	start, run, destroy      time.Duration
	startCPU, runCPU, cliCPU time.Duration // sandbox cgroup at ready, its growth over the run, runsc commands
	idleMem                  int64
}

func run() error {
	runscPath := flag.String("runsc", "", "runsc binary")
	cache := flag.String("cache-dir", "/var/cache/paddock", "cache with the built root filesystems")
	agents := flag.String("agents", "", "name=agent binary, comma-separated, measured in turn")
	n := flag.Int("n", 10, "samples per agent")
	settle := flag.Duration("settle", time.Second, "idle time before a sandbox's memory is read")
	code := flag.String("code", "console.log(1)", "the one-shot program")
	flag.Parse()

	tmpl, err := templates.Get("node")
	if err != nil {
		return err
	}
	img, err := (&rootfs.Builder{CacheDir: *cache}).Lookup(tmpl)
	if err != nil {
		return err
	}
	spec := runner.Spec{Template: "node", Language: "node", Rootfs: img.Path, Limits: runner.Limits{
		MemoryBytes: tmpl.Limits.MemoryBytes(), Processes: tmpl.Limits.Processes, CPUs: tmpl.Limits.CPUs,
		DiskBytes: tmpl.Limits.DiskBytes(), OpenFiles: tmpl.Limits.OpenFiles}}
	type mode struct {
		name string
		rt   *runsc.Runtime
		got  []sample
	}
	var modes []*mode
	for _, kv := range strings.Split(*agents, ",") {
		name, path, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("bad -agents entry %q", kv)
		}
		state, err := os.MkdirTemp("", "pdk-nodestart-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(state)
		rt, err := runsc.New(runsc.Config{Runsc: *runscPath, StateDir: state, Agent: path})
		if err != nil {
			return err
		}
		defer rt.Close()
		modes = append(modes, &mode{name: name, rt: rt})
	}
	ctx := context.Background()
	for i := range *n {
		order := slices.Clone(modes)
		if i%2 == 1 {
			slices.Reverse(order)
		}
		for _, m := range order {
			s, err := measure(ctx, m.rt, spec, *code, *settle)
			if err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
			m.got = append(m.got, s)
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("node sandbox start, %d samples each, medians; loadavg %s", *n, load)
	fmt.Printf("%-8s %9s %9s %9s %9s | %10s %10s %10s %10s | %9s\n", "agent", "start", "run", "destroy", "one-shot", "cpu:ready", "cpu:run", "cpu:runsc", "cpu:total", "idle MiB")
	for _, m := range modes {
		med := func(f func(sample) time.Duration) time.Duration {
			v := make([]time.Duration, len(m.got))
			for i, s := range m.got {
				v[i] = f(s)
			}
			slices.Sort(v)
			return v[len(v)/2]
		}
		mem := make([]int64, len(m.got))
		for i, s := range m.got {
			mem[i] = s.idleMem
		}
		slices.Sort(mem)
		ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + "ms" }
		fmt.Printf("%-8s %9s %9s %9s %9s | %10s %10s %10s %10s | %9.1f\n", m.name,
			ms(med(func(s sample) time.Duration { return s.start })),
			ms(med(func(s sample) time.Duration { return s.run })),
			ms(med(func(s sample) time.Duration { return s.destroy })),
			ms(med(func(s sample) time.Duration { return s.start + s.run + s.destroy })),
			ms(med(func(s sample) time.Duration { return s.startCPU })),
			ms(med(func(s sample) time.Duration { return s.runCPU })),
			ms(med(func(s sample) time.Duration { return s.cliCPU })),
			ms(med(func(s sample) time.Duration { return s.startCPU + s.runCPU + s.cliCPU })),
			float64(mem[len(mem)/2])/(1<<20))
	}
	return nil
}

// measure starts one sandbox, lets it idle, runs code in it and destroys
// it.
func measure(ctx context.Context, rt *runsc.Runtime, spec runner.Spec, code string, settle time.Duration) (sample, error) {
	var s sample
	cli0 := childrenCPU()
	t0 := time.Now()
	sb, err := rt.Start(ctx, spec)
	if err != nil {
		return s, err
	}
	s.start = time.Since(t0)
	cg := ocispec.CgroupsPath(sb.ID())
	s.startCPU = cgroupCPU(cg)
	time.Sleep(settle)
	s.idleMem = cgroupInt("memory", cg, "memory.usage_in_bytes")
	if *showStat {
		b, _ := os.ReadFile(filepath.Join("/sys/fs/cgroup/memory", cg, "memory.stat"))
		procs, _ := os.ReadFile(filepath.Join("/sys/fs/cgroup/memory", cg, "cgroup.procs"))
		fmt.Printf("memory.stat at idle (procs %q):\n%s\n", procs, b)
	}
	idleCPU := cgroupCPU(cg)
	t1 := time.Now()
	res, err := sb.Run(ctx, runner.RunRequest{Code: code, Timeout: 30 * time.Second, MaxStdout: 1 << 20, MaxStderr: 1 << 20}, nil)
	s.run = time.Since(t1)
	s.runCPU = cgroupCPU(cg) - idleCPU
	if err == nil && res.Reason != runner.ReasonOK {
		err = fmt.Errorf("run ended %s: %q", res.Reason, res.Stderr)
	}
	t2 := time.Now()
	if derr := sb.Destroy(ctx); derr != nil && err == nil {
		err = derr
	}
	s.destroy = time.Since(t2)
	s.cliCPU = childrenCPU() - cli0
	return s, err
}

func cgroupInt(controller, cg, file string) int64 {
	b, err := os.ReadFile(filepath.Join("/sys/fs/cgroup", controller, cg, file))
	if err != nil {
		return -1
	}
	v, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return v
}

func cgroupCPU(cg string) time.Duration {
	return time.Duration(cgroupInt("cpuacct", cg, "cpuacct.usage"))
}

// childrenCPU is the user and system time of this process's reaped
// children.
func childrenCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
