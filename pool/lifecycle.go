package pool

import (
	"context"
	"fmt"

	"github.com/paddock-dev/paddock/runner"
)

// Start launches one filler goroutine per template. Calls after the first,
// or after Close, do nothing.
func (m *Manager) Start() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started || m.closed {
		return
	}
	m.started = true
	for _, tp := range m.order {
		// A deferred template's fillers start when it is provided.
		if tp.provided.Load() {
			m.startFillersLocked(tp)
		}
	}
	m.fillers.Add(1)
	go m.adapt()
	go func() {
		m.fillers.Wait()
		close(m.fillersDone)
	}()
}

// startFillersLocked launches tp's fillers. While the manager is open
// the adapt goroutine keeps the fillers' count above zero, so adding to it
// after Start is allowed.
func (m *Manager) startFillersLocked(tp *tpool) {
	m.fillers.Add(1)
	go m.fill(tp)
	if tp.tmpl.Kernels > 0 {
		m.fillers.Add(1)
		go m.fillKernels(tp)
	}
	if tp.tmpl.Snapshot && m.snap != nil {
		tp.snap = snapBuilding
		m.fillers.Add(1)
		go m.keepSnapshot(tp, &tp.snapImage)
	}
}

// Close stops the fillers, destroys the ready sandboxes and waits, bounded
// by ctx, until every sandbox the manager started is destroyed — leased
// ones included, so their holders must Release them. Acquire and Run fail
// with ErrClosed once Close has begun. Close may be called more than once.
func (m *Manager) Close(ctx context.Context) error {
	var drop []runner.Sandbox
	m.mu.Lock()
	if !m.closed {
		m.closed = true
		m.cancel()
		if !m.started {
			m.started = true
			close(m.fillersDone)
		}
		for _, tp := range m.order {
			for _, e := range tp.ready {
				close(e.taken)
				drop = append(drop, e.sb)
			}
			tp.ready = nil
			drop = append(drop, tp.dropKernelsLocked()...)
		}
	}
	m.mu.Unlock()

	for _, sb := range drop {
		m.destroy(sb)
	}
	select {
	case <-m.fillersDone:
	case <-ctx.Done():
		return fmt.Errorf("closing pool: waiting for fillers: %w", ctx.Err())
	}
	select {
	case <-m.drainedCh():
		return nil
	case <-ctx.Done():
		return fmt.Errorf("closing pool: %d sandboxes still alive: %w", m.liveCount(), ctx.Err())
	}
}

// hold counts one more live sandbox. Callers hold m.mu.
func (m *Manager) holdLocked() { m.live++ }

// unholdLocked counts one live sandbox gone. Callers hold m.mu.
func (m *Manager) unholdLocked() {
	m.live--
	if m.live == 0 && m.drained != nil {
		close(m.drained)
		m.drained = nil
	}
}

func (m *Manager) unhold() {
	m.mu.Lock()
	m.unholdLocked()
	m.mu.Unlock()
}

func (m *Manager) liveCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.live
}

// drainedCh returns a channel closed once no sandbox is live.
func (m *Manager) drainedCh() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.live == 0 {
		ch := make(chan struct{})
		close(ch)
		return ch
	}
	if m.drained == nil {
		m.drained = make(chan struct{})
	}
	return m.drained
}

// destroy destroys sb in the background on a context of its own and then
// drops the live count sb holds.
func (m *Manager) destroy(sb runner.Sandbox) {
	go func() {
		defer m.unhold()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(m.ctx), destroyTimeout)
		defer cancel()
		if err := sb.Destroy(ctx); err != nil {
			m.log.Warn("destroying sandbox failed", keySandboxID, sb.ID(), "error", err)
		}
	}()
}
