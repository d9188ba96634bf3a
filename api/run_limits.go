package api

import (
	"cmp"

	"github.com/paddock-dev/paddock/policy"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
)

// The least a run request may ask for in its "limits": below them the
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

// limitsRequest is the "limits" object of a run request: resource limits
// for this run in place of its template's. An absent (or null) field keeps
// the template's.
type limitsRequest struct {
	MemoryMB  *int64   `json:"memory_mb"`
	Processes *int64   `json:"processes"`
	CPUs      *float64 `json:"cpus"`
	DiskMB    *int64   `json:"disk_mb"`
	OpenFiles *int64   `json:"open_files"`
}

// toRunOptions checks a run request's limits against the minima and the
// configured maxima and returns the pool's options for them. The pool
// decides whether they differ from the template's.
func (s *server) toRunOptions(l *limitsRequest) (pool.RunOptions, error) {
	var o pool.RunOptions
	if l == nil {
		return o, nil
	}
	if err := s.checkLimits(l); err != nil {
		return o, outOfRange(err)
	}
	o.Limits = runner.Limits{
		MemoryBytes: orZero(l.MemoryMB) << 20,
		Processes:   int(orZero(l.Processes)),
		DiskBytes:   orZero(l.DiskMB) << 20,
		OpenFiles:   int(orZero(l.OpenFiles)),
	}
	if l.CPUs != nil {
		o.Limits.CPUs = *l.CPUs
	}
	return o, nil
}

// checkLimits checks the fields given of a request's limits against the
// minima and the configured maxima, in the order of the object's fields.
func (s *server) checkLimits(l *limitsRequest) error {
	c := s.cfg
	within := func(name string, v *int64, lo, hi int, unit string) error {
		if v == nil {
			return nil
		}
		return policy.Within("limits."+name, *v, int64(lo), int64(hi), unit)
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
func orZero(v *int64) int64 {
	if v == nil {
		return 0
	}
	return *v
}

// requestLimits are the least and the most a run request may ask for, as
// GET /v1/templates shows them.
func (s *server) requestLimits() (lo, hi Limits) {
	c := s.cfg
	lo = Limits{MemoryMB: MinMemoryMB, Processes: MinProcesses, CPUs: MinCPUs, DiskMB: MinDiskMB, OpenFiles: MinOpenFiles, TimeoutMS: 1}
	hi = Limits{MemoryMB: c.MaxMemoryMB, Processes: c.MaxProcesses, CPUs: c.MaxCPUs, DiskMB: c.MaxDiskMB, OpenFiles: c.MaxOpenFiles,
		TimeoutMS: int(c.MaxTimeout.Milliseconds())}
	return lo, hi
}
