package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Host CPU over a measurement, read from the kernel, two ways:
//
//   - the machine: the busy time of every CPU in /proc/stat (user, nice,
//     system, irq, softirq, steal) over the window, less the bench's own
//     (getrusage RUSAGE_SELF: the load generator). Nothing escapes it, but
//     on a shared machine it also holds whatever else ran meanwhile: the
//     load average beside each point says how much that may be.
//   - attributed: for Paddock, the server process's own time and that of
//     the children it reaped (/proc/<pid>/stat utime, stime, cutime,
//     cstime: the runsc commands it runs), plus the cpuacct usage of its
//     sandbox cgroups, read every cgroupPoll while they live (a lower
//     bound: what a sandbox spends after the last read before its cgroup
//     goes is lost); for raw runsc, the bench's reaped children
//     (RUSAGE_CHILDREN: each `runsc run` and `runsc delete`, and the
//     sandbox and gofer processes `runsc run` itself waits for).

// userHZ is the clock tick of /proc/stat and /proc/<pid>/stat: USER_HZ,
// 100 on every Linux architecture Paddock builds for.
const userHZ = 100

// cgroupPoll is how often the sandbox cgroups' usage is read.
const cgroupPoll = 100 * time.Millisecond

// cpuUsage is host CPU in seconds over one measurement.
type cpuUsage struct {
	Machine   float64 // /proc/stat busy time, all CPUs
	Bench     float64 // the bench process itself (RUSAGE_SELF)
	Children  float64 // the bench's reaped children (RUSAGE_CHILDREN)
	Server    float64 // the server and its reaped children
	Sandboxes float64 // the server's sandbox cgroups (lower bound)
	Wall      float64 // the window's wall time
}

// machinePerRun is the machine's busy time less the bench's, per run.
func (u cpuUsage) machinePerRun(runs int) float64 {
	if runs == 0 {
		return 0
	}
	return max(u.Machine-u.Bench, 0) / float64(runs)
}

// attributedPerRun is the CPU the measured processes account for, per
// run: the server and its sandboxes for Paddock, the reaped runsc
// processes for raw runs.
func (u cpuUsage) attributedPerRun(target string, runs int) float64 {
	if runs == 0 {
		return 0
	}
	if target == targetRaw || target == targetEmpty {
		return u.Children / float64(runs)
	}
	return (u.Server + u.Sandboxes) / float64(runs)
}

// cpuSources says what a meter reads besides the machine and the bench.
type cpuSources struct {
	serverPID int               // 0: no server
	sandboxes func(string) bool // the server's own sandbox cgroups, by ID; nil: none
	children  bool              // the bench's reaped children
	// cgroupRoot is where the sandbox cgroups are (default: the cpuacct
	// hierarchy's /paddock).
	cgroupRoot string
}

type cpuMeter struct {
	src   cpuSources
	begin time.Time
	start cpuUsage
	stopc chan struct{}
	done  sync.WaitGroup
	mu    sync.Mutex
	seen  map[string]float64 // sandbox cgroup → its last usage read
}

func startCPUMeter(src cpuSources) *cpuMeter {
	if src.cgroupRoot == "" {
		src.cgroupRoot = sandboxCPURoot("/sys/fs/cgroup")
	}
	m := &cpuMeter{src: src, stopc: make(chan struct{}), seen: map[string]float64{}}
	if src.sandboxes != nil {
		m.poll()
		m.done.Go(func() {
			tick := time.NewTicker(cgroupPoll)
			defer tick.Stop()
			for {
				select {
				case <-m.stopc:
					return
				case <-tick.C:
					m.poll()
				}
			}
		})
	}
	m.begin = time.Now()
	m.start = m.read()
	m.start.Sandboxes = m.sandboxTotal()
	return m
}

// stop ends the measurement and returns the CPU spent since the start.
func (m *cpuMeter) stop() cpuUsage {
	end := m.read()
	close(m.stopc)
	m.done.Wait()
	if m.src.sandboxes != nil {
		m.poll()
	}
	end.Sandboxes = m.sandboxTotal()
	d := cpuUsage{
		Machine:   end.Machine - m.start.Machine,
		Bench:     end.Bench - m.start.Bench,
		Children:  end.Children - m.start.Children,
		Server:    end.Server - m.start.Server,
		Sandboxes: end.Sandboxes - m.start.Sandboxes,
		Wall:      time.Since(m.begin).Seconds(),
	}
	return d
}

func (m *cpuMeter) read() cpuUsage {
	var u cpuUsage
	if f, err := os.Open("/proc/stat"); err == nil {
		u.Machine, _ = parseProcStatBusy(f)
		f.Close()
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		u.Bench = rusageSeconds(ru)
	}
	if m.src.children && syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) == nil {
		u.Children = rusageSeconds(ru)
	}
	if m.src.serverPID > 0 {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", m.src.serverPID)); err == nil {
			u.Server, _ = parsePidStatCPU(string(b))
		}
	}
	return u
}

// poll reads the usage of every live sandbox cgroup of the server's.
func (m *cpuMeter) poll() {
	ents, err := os.ReadDir(m.src.cgroupRoot)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		id := e.Name()
		m.mu.Lock()
		_, known := m.seen[id]
		m.mu.Unlock()
		if !known && !m.src.sandboxes(id) {
			continue
		}
		v, err := readCgroupCPU(filepath.Join(m.src.cgroupRoot, id))
		if err != nil {
			continue // gone meanwhile: its last read stands
		}
		m.mu.Lock()
		m.seen[id] = max(m.seen[id], v)
		m.mu.Unlock()
	}
}

func (m *cpuMeter) sandboxTotal() float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := 0.0
	for _, v := range m.seen {
		t += v
	}
	return t
}

// sandboxCPURoot is the parent of the sandboxes' CPU accounting cgroups:
// the cpuacct hierarchy's /paddock on cgroup v1, /paddock of the unified
// hierarchy on v2.
func sandboxCPURoot(sysfs string) string {
	if cg, err := detectMemCgroups(sysfs); err == nil && cg.V2 {
		return cg.Root
	}
	return filepath.Join(sysfs, "cpuacct", "paddock")
}

// readCgroupCPU is a cgroup's CPU time in seconds: cpuacct.usage (ns) on
// v1, cpu.stat's usage_usec on v2.
func readCgroupCPU(dir string) (float64, error) {
	if b, err := os.ReadFile(filepath.Join(dir, "cpuacct.usage")); err == nil {
		ns, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		return float64(ns) / 1e9, err
	}
	f, err := os.Open(filepath.Join(dir, "cpu.stat"))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := parseMemStat(f)
	if err != nil {
		return 0, err
	}
	us, ok := st["usage_usec"]
	if !ok {
		return 0, fmt.Errorf("%s/cpu.stat: no usage_usec", dir)
	}
	return float64(us) / 1e6, nil
}

// parseProcStatBusy is the busy time of all CPUs in seconds from
// /proc/stat's "cpu" line: user, nice, system, irq, softirq and steal
// (guest time is already inside user and nice; idle and iowait are not
// busy).
func parseProcStatBusy(r io.Reader) (float64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || f[0] != "cpu" {
			continue
		}
		if len(f) < 9 {
			return 0, fmt.Errorf("/proc/stat: short cpu line %q", sc.Text())
		}
		var busy uint64
		for _, i := range []int{1, 2, 3, 6, 7, 8} { // user nice system irq softirq steal
			v, err := strconv.ParseUint(f[i], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/stat: %w", err)
			}
			busy += v
		}
		return float64(busy) / userHZ, nil
	}
	return 0, fmt.Errorf("/proc/stat: no cpu line")
}

// parsePidStatCPU is a process's utime + stime + cutime + cstime in
// seconds from its /proc/<pid>/stat line. The command name, in
// parentheses, may hold spaces: fields are counted after its last ')'.
func parsePidStatCPU(line string) (float64, error) {
	i := strings.LastIndexByte(line, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/pid/stat: no command name")
	}
	// After ')': state (field 3) … utime is field 14, cstime field 17.
	f := strings.Fields(line[i+1:])
	if len(f) < 15 {
		return 0, fmt.Errorf("/proc/pid/stat: %d fields after the name", len(f))
	}
	var t uint64
	for _, s := range f[11:15] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/pid/stat: %w", err)
		}
		t += v
	}
	return float64(t) / userHZ, nil
}

func rusageSeconds(ru syscall.Rusage) float64 {
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
