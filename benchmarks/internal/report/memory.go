package report

// MemSample is the host memory one idle sandbox holds, in bytes.
type MemSample struct {
	ID string `json:"id"`
	// Usage is everything charged to the sandbox, page cache included:
	// memory.usage_in_bytes (v1) or memory.current (v2).
	Usage uint64 `json:"usage_bytes"`
	// RSS is its anonymous memory: memory.stat rss (v1) or anon (v2).
	RSS uint64 `json:"rss_bytes"`
	// Shmem is its shared memory (memory.stat shmem): gVisor's guest
	// memory file is charged here.
	Shmem uint64 `json:"shmem_bytes"`
	// SentryAnon and GoferAnon split RSS by gVisor process: the anonymous
	// memory of runsc-sandbox and of runsc-gofer (see runscAnon); 0 on
	// runc.
	SentryAnon uint64 `json:"sentry_anon_bytes"`
	GoferAnon  uint64 `json:"gofer_anon_bytes"`
}

// MemRow is the memory of one template's idle pooled sandboxes on one
// server that were made the same way.
type MemRow struct {
	Lang string
	// Server names the server the sandboxes were pooled on.
	Server string
	// Start is how those sandboxes were made, read from each sandbox's
	// runsc state: "restore" or "cold".
	Start   string
	Samples []MemSample
	Note    string
}

// MeanMB is the mean of field over the samples, in MiB.
func (m MemRow) MeanMB(field func(MemSample) uint64) float64 {
	return meanMiB(m.Samples, field)
}

// MiB is a mebibyte, the unit of the memory tables.
const MiB = 1 << 20

// meanMiB is the mean of field over samples, in MiB; 0 for none.
func meanMiB[S any](samples []S, field func(S) uint64) float64 {
	if len(samples) == 0 {
		return 0
	}
	var sum float64
	for _, s := range samples {
		sum += float64(field(s))
	}
	return sum / float64(len(samples)) / MiB
}

// NativeRSS is the resident memory of one template's interpreter idling
// natively after its warm-up, one sample per process started.
type NativeRSS struct {
	Template string          `json:"template"`
	Samples  []ProcRSSSample `json:"samples"`
	Note     string          `json:"note,omitempty"`
}

// ProcRSSSample is one process's /proc/PID/status memory lines, read while
// it waits (kernel's VmRSS = RssAnon + RssFile + RssShmem), and the peak
// the kernel reported when it ended (ru_maxrss of the child).
type ProcRSSSample struct {
	VmRSS    uint64 `json:"vm_rss_bytes"`
	RssAnon  uint64 `json:"rss_anon_bytes"`
	RssFile  uint64 `json:"rss_file_bytes"`
	RssShmem uint64 `json:"rss_shmem_bytes"`
	MaxRSS   uint64 `json:"max_rss_bytes"`
}

// MeanMB is the mean of field over the samples, in MiB.
func (n NativeRSS) MeanMB(field func(ProcRSSSample) uint64) float64 {
	return meanMiB(n.Samples, field)
}

// VmRSSMB is the mean VmRSS in MiB: the figure targets are built on.
func (n NativeRSS) VmRSSMB() float64 {
	return n.MeanMB(func(s ProcRSSSample) uint64 { return s.VmRSS })
}
