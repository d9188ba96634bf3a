package pool

// Stats is a snapshot of one template's pool.
type Stats struct {
	Template string
	// Target is how many ready sandboxes the pool currently aims for. It
	// follows demand between Floor and Ceiling.
	Target   int
	Floor    int
	Ceiling  int
	Ready    int
	InUse    int
	Starting int
	// Waiting counts the requests in the admission queue for a sandbox
	// of this template (runs and sessions past the start budget or the
	// run slots).
	Waiting int
	// Hits and Misses count acquires served ready and not ready.
	Hits          uint64
	Misses        uint64
	StartFailures uint64
	// Restores and ColdStarts count sandboxes made each way, for the pool
	// and on the request path. RestoreFailures counts restores that failed
	// and fell back to a cold start.
	Restores        uint64
	ColdStarts      uint64
	RestoreFailures uint64
	// Snapshot is the state of the template's snapshot: "off" (not
	// snapshotted), "building", "ready" or "failed".
	Snapshot string
	// NetworkSnapshot is the state of its networked image, which
	// networked starts restore from (netsnap.go): "off" until the first
	// one, then as Snapshot.
	NetworkSnapshot string
	// Healthy is true once the template has produced a working sandbox.
	Healthy bool
	// Image is ImageReady, or for a deferred template ImageBuilding until
	// it is provided (ImageFailed if it never will be).
	Image string
	// Kernel-ready sandboxes for sessions (kernels.go): how many are kept,
	// ready and being made, and the sessions that found one (KernelHits)
	// or none (KernelMisses). They are not counted in Ready, Starting,
	// Hits or Misses; a taken one counts in InUse.
	Kernels         int
	KernelsReady    int
	KernelsStarting int
	KernelHits      uint64
	KernelMisses    uint64
}

// Stats returns one snapshot per template, in configuration order.
func (m *Manager) Stats() []Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Stats, 0, len(m.order))
	for _, tp := range m.order {
		out = append(out, Stats{
			Template:        tp.tmpl.Name,
			Target:          tp.target,
			Floor:           tp.tmpl.Size,
			Ceiling:         tp.tmpl.Max,
			Restores:        tp.restores,
			ColdStarts:      tp.colds,
			RestoreFailures: tp.restoreFailures,
			Snapshot:        string(tp.snap),
			NetworkSnapshot: string(tp.net.snap),
			Ready:           len(tp.ready),
			InUse:           tp.inUse,
			Starting:        tp.starting,
			Waiting:         m.queue.waiting(tp),
			Hits:            tp.hits,
			Misses:          tp.misses,
			StartFailures:   tp.failures,
			Healthy:         tp.healthy,
			Image:           tp.imageLocked(),
			Kernels:         tp.tmpl.Kernels,
			KernelsReady:    len(tp.kernels),
			KernelsStarting: tp.kernelsStarting,
			KernelHits:      tp.kernelHits,
			KernelMisses:    tp.kernelMisses,
		})
	}
	return out
}

// Ready reports whether the manager is open, every template has its root
// filesystem (none is deferred and unprovided) and every template with a
// non-zero pool size has produced a working sandbox. Templates of size 0
// only start on demand and do not hold readiness back.
func (m *Manager) Ready() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false
	}
	for _, tp := range m.order {
		if !tp.provided.Load() || tp.tmpl.Size > 0 && !tp.healthy {
			return false
		}
	}
	return true
}

// Templates returns the template names in configuration order.
func (m *Manager) Templates() []string {
	names := make([]string, len(m.order))
	for i, tp := range m.order {
		names[i] = tp.tmpl.Name
	}
	return names
}
