package ocispec

// Node's V8 heap is capped below the sandbox's memory limit, so that a
// program that fills it dies of V8's own out-of-memory error (the agent
// reports oom) rather than of the memory cgroup's kill. The rest of the
// sandbox (the Sentry, the agent, node's code and young generation, and
// the marking a full heap makes V8 do) took 60 MiB plus a quarter of the
// heap at most when measured; 30% of what lies above 64 MiB leaves that.
const (
	heapBaseMB  = 64
	heapPercent = 70
	// minHeapMB is the smallest ceiling worth setting: below it node's
	// default ceiling (about 260 MiB) is above the memory limit anyway,
	// and the cgroup stops every program first.
	minHeapMB = 64
)

// NodeHeapMB is the V8 old-generation ceiling, in MiB, of a Node sandbox
// whose memory limit is memBytes, or 0 to keep V8's default.
func NodeHeapMB(memBytes int64) int64 {
	mb := (memBytes>>20 - heapBaseMB) * heapPercent / 100
	if mb < minHeapMB {
		return 0
	}
	return mb
}
