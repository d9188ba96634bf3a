package pool

import (
	"context"
	"fmt"
	"time"

	"github.com/paddock-dev/paddock/runner"
)

// RunOptions adjust one run of RunWith, or one lease of AcquireWith.
type RunOptions struct {
	// Limits override the template's limits field by field: a non-zero
	// field replaces the template's, a zero one keeps it. When that
	// changes anything, the run gets a sandbox started for it on the
	// request path (StartCold, without the warm-up, like any request-path
	// cold start), because pooled and restored sandboxes carry the
	// template's limits.
	Limits runner.Limits
	// Tenant is whose request this is: waiting requests are served in
	// turn across tenants. "" is a tenant like any other.
	Tenant string
	// Since, when set, is when the request began to wait, before it
	// reached the pool (for its tenant's run slot): the queue deadline
	// counts from it, and a run's Timing.Queue and Total include that
	// wait. Zero: from the call.
	Since time.Time
	// Network asks for a sandbox with a network interface for an egress
	// proxy (runner.Spec.Network): one started for the request, like a
	// run with other limits, since pooled sandboxes have none. With the
	// template's limits it is restored from the template's networked
	// image when there is one (netsnap.go).
	Network bool
	// OnLease, when set, is called with the run's sandbox before the run
	// starts (to serve its egress proxy, say); its error ends the run, and
	// the func it returns is called once the run is over, before the
	// sandbox is released.
	OnLease func(runner.Sandbox) (func(), error)
}

// AcquireWith is Acquire with opts: limits other than the template's get
// a sandbox started for the lease on the request path (see RunOptions), as
// for RunWith. Sessions take their sandbox this way.
func (m *Manager) AcquireWith(ctx context.Context, template string, opts RunOptions) (Lease, error) {
	tp, ok := m.pools[template]
	if !ok {
		return Lease{}, fmt.Errorf("acquiring %q: %w", template, ErrUnknownTemplate)
	}
	if err := m.available(tp); err != nil {
		return Lease{}, err
	}
	spec, custom := tp.specFor(opts)
	return m.lease(ctx, tp, spec, custom, opts.Tenant, false, opts.Since, "")
}

// specFor returns the spec a run with opts needs on tp and whether it
// differs from the template's.
func (tp *tpool) specFor(opts RunOptions) (runner.Spec, bool) {
	spec := tp.tmpl.Spec
	l, o := &spec.Limits, opts.Limits
	if o.MemoryBytes > 0 {
		l.MemoryBytes = o.MemoryBytes
	}
	if o.Processes > 0 {
		l.Processes = o.Processes
	}
	if o.CPUs > 0 {
		l.CPUs = o.CPUs
	}
	if o.DiskBytes > 0 {
		l.DiskBytes = o.DiskBytes
	}
	if o.OpenFiles > 0 {
		l.OpenFiles = o.OpenFiles
	}
	if *l == tp.tmpl.Spec.Limits && !opts.Network {
		return tp.tmpl.Spec, false
	}
	spec.Warmup = ""
	spec.Network = opts.Network
	return spec, true
}

// startCustom starts a sandbox of spec (tp's template with other limits
// or a network) on the request path and leases it, or wakes it from the
// image in wake when that is set. A networked one with the template's
// limits is restored from the template's networked image when it can be
// (netsnap.go). The caller holds a start slot, as for a cold miss, but
// this is no miss: the pool could not have served it, so it does not
// raise the pool's target.
func (m *Manager) startCustom(ctx context.Context, tp *tpool, spec runner.Spec, wake string) (runner.Sandbox, StartKind, error) {
	mem := spec.Limits.MemoryBytes
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, "", fmt.Errorf("acquiring %s sandbox: %w", tp.tmpl.Name, ErrClosed)
	}
	tp.inUse++ // leased to this request from the start: it never joins the pool
	tp.custom++
	tp.customMemory += mem
	m.holdLocked()
	m.mu.Unlock()

	sctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(m.ctx, cancel)
	var sb runner.Sandbox
	var err error
	kind := StartCold
	switch {
	case wake != "":
		sb, err = m.wakeFrom(sctx, tp.tmpl.Name, wake, spec)
		kind = StartWake
	case m.netRestorable(tp, spec):
		sb, kind, err = m.makeNetworked(sctx, tp, spec)
	default:
		sb, err = m.start(sctx, tp.tmpl.Name, spec)
	}
	stop()
	cancel()

	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		tp.inUse--
		tp.custom--
		tp.customMemory -= mem
		m.unholdLocked()
		switch {
		case ctx.Err() != nil:
			return nil, "", fmt.Errorf("starting with custom limits: %w", ctx.Err())
		case m.closed:
			return nil, "", fmt.Errorf("starting with custom limits: %w", ErrClosed)
		}
		tp.failures++
		return nil, "", fmt.Errorf("starting with custom limits: %w", err)
	}
	if kind == StartCold {
		tp.colds++
	}
	if m.closed {
		tp.inUse--
		tp.custom--
		tp.customMemory -= mem
		m.destroy(sb)
		return nil, "", fmt.Errorf("starting with custom limits: %w", ErrClosed)
	}
	m.leases[sb.ID()] = tp
	m.customMem[sb.ID()] = mem
	return sb, kind, nil
}

// releaseCustomLocked forgets the custom limits of a leased sandbox of tp,
// if it had any. Callers hold m.mu.
func (m *Manager) releaseCustomLocked(tp *tpool, id string) {
	mem, ok := m.customMem[id]
	if !ok {
		return
	}
	delete(m.customMem, id)
	tp.custom--
	tp.customMemory -= mem
}
