package steady

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/host"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
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

// cgroupPoll is how often the sandbox cgroups' usage is read.
const cgroupPoll = 100 * time.Millisecond

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
	start report.CPUUsage
	stopc chan struct{}
	done  sync.WaitGroup
	mu    sync.Mutex
	seen  map[string]float64 // sandbox cgroup → its last usage read
}

func startCPUMeter(src cpuSources) *cpuMeter {
	if src.cgroupRoot == "" {
		src.cgroupRoot = host.SandboxCPURoot("/sys/fs/cgroup")
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
func (m *cpuMeter) stop() report.CPUUsage {
	end := m.read()
	close(m.stopc)
	m.done.Wait()
	if m.src.sandboxes != nil {
		m.poll()
	}
	end.Sandboxes = m.sandboxTotal()
	d := report.CPUUsage{
		Machine:   end.Machine - m.start.Machine,
		Bench:     end.Bench - m.start.Bench,
		Children:  end.Children - m.start.Children,
		Server:    end.Server - m.start.Server,
		Sandboxes: end.Sandboxes - m.start.Sandboxes,
		Wall:      time.Since(m.begin).Seconds(),
	}
	return d
}

func (m *cpuMeter) read() report.CPUUsage {
	var u report.CPUUsage
	if f, err := os.Open("/proc/stat"); err == nil {
		u.Machine, _ = host.ParseProcStatBusy(f)
		f.Close()
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		u.Bench = host.RusageSeconds(ru)
	}
	if m.src.children && syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) == nil {
		u.Children = host.RusageSeconds(ru)
	}
	if m.src.serverPID > 0 {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", m.src.serverPID)); err == nil {
			u.Server, _ = host.ParsePidStatCPU(string(b))
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
		v, err := host.ReadCgroupCPU(filepath.Join(m.src.cgroupRoot, id))
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
