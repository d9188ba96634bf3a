package pool

import (
	"context"

	"github.com/paddock-dev/paddock/runner"
)

// Networked starts (RunOptions.Network) of a snapshotted template restore
// a second image of it, taken with a network: gVisor's netstack keeps its
// interfaces in the image, so the template's own image (no network)
// restores without one. The runtime takes it in a network namespace of
// the fixed inside shape and restores every clone into a fresh namespace
// of that shape with its own veth and egress listener: clones share the
// image's bytes, never a namespace or a listener.
//
// The image is built at the first networked start of the template, not
// at warm-up: servers that give runs no network (the default) never pay
// for it, and the pool need not know the server's egress allowance. That
// first start, and every one until the image is ready or while it is
// rebuilt, is a cold start without the warm-up, as before.
//
// Networked sandboxes are not kept ready: they are started for the
// request, like sandboxes with other limits, only from the image. Kept
// ready, each would hold a namespace, a veth, a listener and an idle
// sandbox's memory for a kind of run most servers never see, beside the
// pool of sandboxes without a network.

// netRestorable reports whether a start of spec for tp can restore tp's
// networked image: spec is the template's with a network and the
// template's limits, and the template is snapshotted.
func (m *Manager) netRestorable(tp *tpool, spec runner.Spec) bool {
	return m.snap != nil && tp.tmpl.Snapshot && spec.Network && spec.Limits == tp.tmpl.Spec.Limits
}

// makeNetworked brings up a networked sandbox of tp for the request:
// restored from tp's networked image when it is ready, else spec started
// cold. A failed restore is counted, logged and has the image rebuilt
// (restoreFailed), and the start falls back cold.
func (m *Manager) makeNetworked(ctx context.Context, tp *tpool, spec runner.Spec) (runner.Sandbox, StartKind, error) {
	if sb, err := m.restore(ctx, tp, &tp.net, false); sb != nil || err != nil {
		return sb, StartRestore, err
	}
	m.keepNetImage(tp) // after the restore's look: the first start is cold
	sb, err := m.start(ctx, tp.tmpl.Name, spec)
	if err != nil {
		return nil, "", err
	}
	return sb, StartCold, nil
}

// keepNetImage sets the keeping of tp's networked image going, once.
func (m *Manager) keepNetImage(tp *tpool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if tp.net.snap != snapOff || !m.started || m.closed {
		return
	}
	tp.net.snap = snapBuilding
	// While the manager is open the adapt goroutine keeps the fillers'
	// count above zero, so adding to it now is allowed.
	m.fillers.Add(1)
	go m.keepSnapshot(tp, &tp.net)
}
