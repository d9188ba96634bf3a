package kernels

import (
	"fmt"
)

// Room in memory. MaxLive caps the sessions awake at once (each holds a
// sandbox); MaxSessions caps those open, asleep ones included. A session
// that needs to be awake (a creation, a fork's child, a wake) over
// MaxLive first hibernates the least recently used idle session; with
// none idle, or hibernation off, it fails with ErrTooManySessions.

// awakeLocked counts the sessions that hold, or are about to hold, a
// sandbox: awake ones, Creates in flight and wakes in flight.
func (m *Manager) awakeLocked() int {
	n := m.pending + m.waking
	for _, s := range m.sessions {
		if !s.asleep && !s.lost && !s.closed {
			n++
		}
	}
	return n
}

// makeRoom hibernates idle sessions until the awake ones, the caller
// counted among them (as pending or waking), fit MaxLive.
func (m *Manager) makeRoom(what string) error {
	if m.cfg.MaxLive <= 0 {
		return nil
	}
	for failures := 0; ; {
		m.mu.Lock()
		n := m.awakeLocked()
		if n <= m.cfg.MaxLive {
			m.mu.Unlock()
			return nil
		}
		var victim *session
		if m.Hibernation() {
			victim = m.idlestLocked()
		}
		if victim == nil {
			m.mu.Unlock()
			return fmt.Errorf("%s: %d sessions would be awake, over the %d this server keeps in memory, and none is idle to hibernate: %w: %w",
				what, n, m.cfg.MaxLive, ErrNoRoom, ErrTooManySessions)
		}
		victim.held, victim.pausing = true, true // its turn, as a call takes it
		victim.active++                          // no expiry while it is saved
		m.mu.Unlock()
		err := m.sleep(m.ctx, victim)
		m.mu.Lock()
		victim.active--
		m.passTurnLocked(victim)
		m.mu.Unlock()
		if err != nil {
			if failures++; failures >= 3 {
				return fmt.Errorf("%s: over the %d sessions this server keeps awake, and hibernating an idle one failed: %w", what, m.cfg.MaxLive, err)
			}
		} else {
			m.log.Info("hibernated the least recently used session to make room", keySessionID, victim.id, "for", what)
		}
	}
}

// idlestLocked is the awake session least recently used with nothing in
// progress, or nil.
func (m *Manager) idlestLocked() *session {
	var out *session
	for _, s := range m.sessions {
		if s.held || s.active > 0 || s.commands > 0 || s.asleep || s.pausing || s.lost || s.closed || isLost(s.cur.k) {
			continue
		}
		if out == nil || s.lastUsed.Before(out.lastUsed) {
			out = s
		}
	}
	return out
}
