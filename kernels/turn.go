package kernels

import (
	"context"
	"fmt"
	"slices"
)

// turnMode says how a call waits for a session's turn.
type turnMode int

const (
	turnNow   turnMode = iota // take it if free, else ErrBusy
	turnQueue                 // wait in line, at most MaxQueue waiting
	turnFirst                 // wait at the head of the line, never refused
)

// acquireTurn takes s's turn: only its holder may Execute or Restart the
// kernel, or replace it. A call that would not wait waits all the same
// behind the replacement of a dead kernel. Waiters are served in order; a wait ends with ctx, or when the
// session is lost or closed. inLine, when non-nil, is called once the
// caller is in line, before it waits.
func (m *Manager) acquireTurn(ctx context.Context, s *session, mode turnMode, inLine func()) error {
	m.mu.Lock()
	if err := m.usableLocked(s); err != nil {
		m.mu.Unlock()
		return err
	}
	if !s.held {
		s.held = true
		m.mu.Unlock()
		return nil
	}
	if mode == turnNow && s.replacing {
		mode = turnQueue // a dead kernel's replacement is not another execution
	}
	switch {
	case mode == turnNow:
		m.mu.Unlock()
		return fmt.Errorf("session %s: another execution is running: %w", s.id, ErrBusy)
	case mode == turnQueue && s.queued >= m.cfg.MaxQueue:
		m.mu.Unlock()
		return fmt.Errorf("session %s: %d executions already queued: %w", s.id, s.queued, ErrBusy)
	}
	ch := make(chan struct{})
	if mode == turnFirst {
		s.waiters = slices.Insert(s.waiters, 0, ch)
	} else {
		s.waiters = append(s.waiters, ch)
		s.queued++
	}
	m.mu.Unlock()
	if inLine != nil {
		inLine()
	}

	var err error
	select {
	case <-ch:
	case <-ctx.Done():
		err = fmt.Errorf("session %s: waiting for its turn: %w", s.id, ctx.Err())
	case <-s.ended:
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	if mode == turnQueue {
		s.queued--
	}
	handed := false
	select {
	case <-ch:
		handed = true
	default:
		s.waiters = slices.DeleteFunc(s.waiters, func(w chan struct{}) bool { return w == ch })
	}
	if err == nil {
		err = m.usableLocked(s)
	}
	if handed && err != nil {
		m.passTurnLocked(s) // not taking it after all
	}
	return err
}

// releaseTurn gives s's turn to the next waiter, or frees it.
func (m *Manager) releaseTurn(s *session) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.passTurnLocked(s)
}

// passTurnLocked hands s's turn to the first waiter, or, when none waits,
// to the replacement of a kernel that died while the turn was held, or
// frees it.
func (m *Manager) passTurnLocked(s *session) {
	if len(s.waiters) == 0 {
		s.held = false
		if l := s.cur; m.claimLocked(s, l) {
			go m.replaceIdle(s, l)
		}
		return
	}
	ch := s.waiters[0]
	s.waiters = s.waiters[1:]
	close(ch)
}

// usableLocked is nil while s can still take calls.
func (m *Manager) usableLocked(s *session) error {
	switch {
	case s.closed:
		return fmt.Errorf("session %s: %w", s.id, ErrSessionNotFound)
	case s.lost:
		return lostErr(s)
	}
	return nil
}
