package kernels

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"
)

// Get describes the owner's session id. A lost session is still shown
// (State "lost"); an expired one is not found.
func (m *Manager) Get(owner, id string) (Info, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.lookupLocked(owner, id)
	if err != nil {
		return Info{}, err
	}
	return m.infoLocked(s), nil
}

// List describes the owner's sessions, oldest first.
func (m *Manager) List(owner string) []Info {
	return m.list(func(s *session) bool { return s.owner == owner })
}

// ListAll describes every owner's sessions, oldest first; Info.Owner says
// whose each is. It is for operators: callers acting for a tenant use
// List.
func (m *Manager) ListAll() []Info {
	return m.list(func(*session) bool { return true })
}

// list describes the unexpired sessions keep selects, oldest first.
func (m *Manager) list(keep func(*session) bool) []Info {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []Info{}
	now := m.cfg.Now()
	for _, s := range m.sessions {
		if keep(s) && !m.expiredLocked(s, now) {
			out = append(out, m.infoLocked(s))
		}
	}
	slices.SortFunc(out, func(a, b Info) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// Delete closes the owner's session id and releases its sandbox. An
// execution in flight ends as the kernel goes away. Lost sessions can be
// deleted; expired ones are not found.
func (m *Manager) Delete(ctx context.Context, owner, id string) error {
	m.mu.Lock()
	s, err := m.lookupLocked(owner, id)
	if err == nil {
		delete(m.sessions, id)
		s.closed = true
	}
	m.mu.Unlock()
	if err != nil {
		return err
	}
	m.end(s, "deleted")
	return nil
}

// lookupLocked finds the owner's live or lost session id. An expired one
// is removed on the spot (the reaper may not have run yet) and, like
// another owner's, answers ErrSessionNotFound.
func (m *Manager) lookupLocked(owner, id string) (*session, error) {
	s, ok := m.sessions[id]
	if !ok || s.owner != owner {
		return nil, fmt.Errorf("session %s: %w", id, ErrSessionNotFound)
	}
	if m.expiredLocked(s, m.cfg.Now()) {
		delete(m.sessions, id)
		s.closed = true
		go m.end(s, "expired")
		return nil, fmt.Errorf("session %s: %w", id, ErrSessionNotFound)
	}
	return s, nil
}

// pin finds the owner's live session id and marks it in use, refreshing
// its TTL; unpin must follow. It returns the session's kernel as it is
// now: a call that waits for the turn reads it again once it has it (the
// turn's holder may replace it). A lost session is ErrSessionLost.
func (m *Manager) pin(owner, id string) (*session, *lease, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.lookupLocked(owner, id)
	if err != nil {
		return nil, nil, err
	}
	if s.lost {
		return nil, nil, lostErr(s)
	}
	s.active++
	s.lastUsed = m.cfg.Now()
	return s, s.cur, nil
}

// unpin ends a use of s begun by pin; the idle TTL counts from now.
func (m *Manager) unpin(s *session) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s.active--
	if !s.lost {
		s.lastUsed = m.cfg.Now()
	}
}

// current is s's kernel now.
func (m *Manager) current(s *session) *lease {
	m.mu.Lock()
	defer m.mu.Unlock()
	return s.cur
}

// end finishes a session already removed from the table: waiters give up
// and the sandbox goes back to the pool to be destroyed.
func (m *Manager) end(s *session, why string) {
	s.markEnded()
	m.release(s)
	m.dropAll(s)
	m.persist(s)
	m.log.Info("session closed", keySessionID, s.id, keyTemplate, s.template, "why", why)
	if why != "deleted" && m.cfg.OnEnd != nil {
		m.cfg.OnEnd(s.owner, s.id, s.template, why)
	}
}

// markLost records that s's kernel died and no fresh one could be had
// (why says both, in words fit for the client): its sandbox is released
// at once, waiters give up and every later call but Get and Delete fails
// with ErrSessionLost. The session stays listed until deleted or expired.
func (m *Manager) markLost(s *session, why string) {
	m.mu.Lock()
	first := !s.lost && !s.closed
	if first {
		s.lost, s.lostWhy = true, why
	}
	sb := s.cur.sb
	m.mu.Unlock()
	if !first {
		return
	}
	s.markEnded()
	m.release(s)
	m.dropAll(s)
	m.persist(s)
	m.log.Warn("session lost; its state is gone", keySessionID, s.id, keyTemplate, s.template,
		keySandboxID, sb.ID(), "why", why)
	if m.cfg.OnEnd != nil {
		m.cfg.OnEnd(s.owner, s.id, s.template, "lost: "+why)
	}
}

// release gives s's current sandbox back to the pool to be destroyed.
func (m *Manager) release(s *session) {
	m.releaseLease(m.current(s))
}

func (m *Manager) releaseLease(l *lease) {
	l.releaseOnce.Do(func() {
		l.dropNet()
		m.pool.Release(l.sb)
	})
}

// SetTTL gives the owner's session id the idle TTL ttl, counted from now
// (at least a millisecond, at most MaxTTL): it expires ttl from now unless
// used before, and never later than its maximum lifetime allows. A lost
// session is ErrSessionLost.
func (m *Manager) SetTTL(owner, id string, ttl time.Duration) (Info, error) {
	if ttl < time.Millisecond || ttl > m.cfg.MaxTTL {
		return Info{}, invalidf("ttl must be between %s and %s; got %s", time.Millisecond, m.cfg.MaxTTL, ttl)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.lookupLocked(owner, id)
	if err != nil {
		return Info{}, err
	}
	if s.lost {
		return Info{}, lostErr(s)
	}
	s.ttl = ttl
	s.lastUsed = m.cfg.Now()
	if s.asleep {
		defer func() { go m.persist(s) }()
	}
	return m.infoLocked(s), nil
}
