package api

import (
	"strconv"

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
	c := s.cfg
	if err := intInRange("memory_mb", l.MemoryMB, MinMemoryMB, int64(c.MaxMemoryMB), " (MiB)"); err != nil {
		return o, err
	}
	if err := intInRange("processes", l.Processes, MinProcesses, int64(c.MaxProcesses), " (processes and threads)"); err != nil {
		return o, err
	}
	if l.CPUs != nil && (*l.CPUs < MinCPUs || *l.CPUs > c.MaxCPUs) {
		return o, invalid("invalid_request", "limits.cpus must be between %s and %s (cores); got %s",
			formatFloat(MinCPUs), formatFloat(c.MaxCPUs), formatFloat(*l.CPUs))
	}
	if err := intInRange("disk_mb", l.DiskMB, MinDiskMB, int64(c.MaxDiskMB), " (MiB)"); err != nil {
		return o, err
	}
	if err := intInRange("open_files", l.OpenFiles, MinOpenFiles, int64(c.MaxOpenFiles), " (per process)"); err != nil {
		return o, err
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

// intInRange checks limits.<name>, when given, against [lo, hi]; unit
// completes the range in the message.
func intInRange(name string, v *int64, lo, hi int64, unit string) error {
	if v == nil || (*v >= lo && *v <= hi) {
		return nil
	}
	return invalid("invalid_request", "limits.%s must be between %d and %d%s; got %d", name, lo, hi, unit, *v)
}

// orZero is *v, or 0 when v is nil.
func orZero(v *int64) int64 {
	if v == nil {
		return 0
	}
	return *v
}

func formatFloat(f float64) string {
	return strconv.FormatFloat(f, 'g', -1, 64)
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
