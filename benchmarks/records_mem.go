package main

import ()

// memSample is the host memory one idle sandbox holds, in bytes.
type memSample struct {
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

// memRow is the memory of one template's idle pooled sandboxes on one
// server that were made the same way.
type memRow struct {
	Lang string
	// Server names the server the sandboxes were pooled on.
	Server string
	// Start is how those sandboxes were made, read from each sandbox's
	// runsc state: "restore" or "cold".
	Start   string
	Samples []memSample
	Note    string
}

// meanMB is the mean of field over the samples, in MiB.
func (m memRow) meanMB(field func(memSample) uint64) float64 {
	return meanMiB(m.Samples, field)
}

const mib = 1 << 20

// meanMiB is the mean of field over samples, in MiB; 0 for none.
func meanMiB[S any](samples []S, field func(S) uint64) float64 {
	if len(samples) == 0 {
		return 0
	}
	var sum float64
	for _, s := range samples {
		sum += float64(field(s))
	}
	return sum / float64(len(samples)) / mib
}
