package pool

import (
	"context"
	"fmt"
	"time"

	"github.com/paddock-dev/paddock/runner"
)

// Hibernation: a session's sandbox is saved whole into an image and
// stopped, its lease ending as with Release, and woken later as a lease of
// its own. A woken sandbox waits for a start slot like any start on the
// request path and counts against the memory budget as a sandbox with
// custom limits does; it never comes from the ready pool.

// CanHibernate reports whether the runtime can save and wake sandboxes.
func (m *Manager) CanHibernate() bool {
	_, ok := m.rt.(runner.Hibernator)
	return ok
}

func (m *Manager) hibernator() (runner.Hibernator, error) {
	h, ok := m.rt.(runner.Hibernator)
	if !ok {
		return nil, fmt.Errorf("hibernating sandboxes: %w", runner.ErrNotSupported)
	}
	return h, nil
}

// Hibernate saves sb, a sandbox this pool leased, into dir and releases
// it. When saving fails, sb stays leased (it may have stopped: its agent's
// end says so).
func (m *Manager) Hibernate(ctx context.Context, sb runner.Sandbox, dir string) error {
	h, err := m.hibernator()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.StartTimeout)
	defer cancel()
	if err := h.Hibernate(ctx, sb, dir); err != nil {
		return err
	}
	// The stopped container is removed now, not off the path as a
	// release does: once Hibernate returns, nothing of it is left running
	// or listed.
	if err := sb.Destroy(ctx); err != nil {
		m.log.Warn("destroying a hibernated sandbox failed", keySandboxID, sb.ID(), "error", err)
	}
	m.Release(sb)
	return nil
}

// Keep saves sb, a sandbox this pool leased, into dir and leaves it
// running, still leased.
func (m *Manager) Keep(ctx context.Context, sb runner.Sandbox, dir string) error {
	h, err := m.hibernator()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.StartTimeout)
	defer cancel()
	return h.Keep(ctx, sb, dir)
}

// Wake leases a sandbox of template woken from the image in dir, which
// Hibernate or Keep saved of a sandbox leased with the same opts (their
// limits give the spec it is woken with). It waits in the admission queue
// as opts.Tenant, as AcquireWith does.
func (m *Manager) Wake(ctx context.Context, template, dir string, opts RunOptions) (Lease, error) {
	if _, err := m.hibernator(); err != nil {
		return Lease{}, err
	}
	tp, ok := m.pools[template]
	if !ok {
		return Lease{}, fmt.Errorf("waking a %q sandbox: %w", template, ErrUnknownTemplate)
	}
	if err := m.available(tp); err != nil {
		return Lease{}, err
	}
	spec, _ := tp.specFor(opts)
	spec.Warmup = tp.tmpl.Spec.Warmup // as the image's sandbox was most likely made
	return m.lease(ctx, tp, spec, true, opts.Tenant, false, opts.Since, dir)
}

// wakeFrom wakes a sandbox of spec from dir, bounded by StartTimeout.
func (m *Manager) wakeFrom(ctx context.Context, name, dir string, spec runner.Spec) (runner.Sandbox, error) {
	h, err := m.hibernator()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.StartTimeout)
	defer cancel()
	begin := time.Now()
	sb, err := h.Wake(ctx, dir, spec)
	if err != nil {
		return nil, fmt.Errorf("waking %s sandbox: %w", name, err)
	}
	m.log.Debug("sandbox woken", keySandboxID, sb.ID(), "template", name, "took", time.Since(begin))
	return sb, nil
}
