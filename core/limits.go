package core

import (
	"cmp"

	"github.com/paddock-dev/paddock/policy"
	"github.com/paddock-dev/paddock/runner"
)

// The least a run or session may ask for in its Limits: below them the
// sandbox cannot start, or not in useful time. Measured under gVisor:
// the agent's own threads and the interpreter count against the process
// limit too (they run as root, and RLIMIT_NPROC binds root without
// CAP_SYS_RESOURCE), so at 8 the agent sometimes cannot make a thread
// and the sandbox dies; at 0.1 CPUs a cold Python start takes 17 s and a
// Node one over 30 s, at 0.25 2 to 8 s.
const (
	MinMemoryMB  = 64
	MinProcesses = 16
	MinCPUs      = 0.25
	MinDiskMB    = 16
	MinOpenFiles = 64
)

// Defaults for the zero maxima in Config.
const (
	DefaultMaxMemoryMB  = 2048
	DefaultMaxProcesses = 256
	DefaultMaxCPUs      = 2
	DefaultMaxDiskMB    = 2048
	DefaultMaxOpenFiles = 4096
)

// Limits are resource limits a run or session asks for in place of its
// template's. A nil field keeps the template's; a given one must lie
// between the Min* values and the configured maxima (RequestLimits).
type Limits struct {
	MemoryMB  *int
	Processes *int
	CPUs      *float64
	DiskMB    *int
	OpenFiles *int
}

// runnerLimits checks l against the minima and the configured maxima and
// returns them in the runner's units (zero: the template's).
func (s *Service) runnerLimits(l Limits) (runner.Limits, error) {
	if err := s.checkLimits(l); err != nil {
		return runner.Limits{}, outOfRange(err)
	}
	out := runner.Limits{
		MemoryBytes: int64(orZero(l.MemoryMB)) << 20,
		Processes:   orZero(l.Processes),
		DiskBytes:   int64(orZero(l.DiskMB)) << 20,
		OpenFiles:   orZero(l.OpenFiles),
	}
	if l.CPUs != nil {
		out.CPUs = *l.CPUs
	}
	return out, nil
}

// checkLimits checks the fields given of l against the minima and the
// configured maxima, in the order of l's fields.
func (s *Service) checkLimits(l Limits) error {
	c := s.cfg
	within := func(name string, v *int, lo, hi int, unit string) error {
		if v == nil {
			return nil
		}
		return policy.Within("limits."+name, int64(*v), int64(lo), int64(hi), unit)
	}
	cpus := func() error {
		if l.CPUs == nil {
			return nil
		}
		return policy.WithinFloat("limits.cpus", *l.CPUs, MinCPUs, c.MaxCPUs, " (cores)")
	}
	return cmp.Or(
		within("memory_mb", l.MemoryMB, MinMemoryMB, c.MaxMemoryMB, " (MiB)"),
		within("processes", l.Processes, MinProcesses, c.MaxProcesses, " (processes and threads)"),
		cpus(),
		within("disk_mb", l.DiskMB, MinDiskMB, c.MaxDiskMB, " (MiB)"),
		within("open_files", l.OpenFiles, MinOpenFiles, c.MaxOpenFiles, " (per process)"),
	)
}

// orZero is *v, or 0 when v is nil.
func orZero(v *int) int {
	if v == nil {
		return 0
	}
	return *v
}
