package kernels

import "time"

// reap closes expired sessions every ReapInterval until Close.
func (m *Manager) reap() {
	defer close(m.reaperDone)
	t := time.NewTicker(m.cfg.ReapInterval)
	defer t.Stop()
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-t.C:
			m.reapExpired()
			m.hibernateIdle()
		}
	}
}

// reapExpired closes every expired session and returns how many.
func (m *Manager) reapExpired() int {
	m.mu.Lock()
	drop := m.sweepLocked()
	m.mu.Unlock()
	for _, s := range drop {
		m.end(s, "expired")
	}
	return len(drop)
}

// sweepLocked removes the expired sessions from the table and returns
// them for the caller to end. A session in use never expires.
func (m *Manager) sweepLocked() []*session {
	now := m.cfg.Now()
	var drop []*session
	for id, s := range m.sessions {
		if m.expiredLocked(s, now) {
			delete(m.sessions, id)
			s.closed = true
			drop = append(drop, s)
		}
	}
	return drop
}
