package kernels

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
)

// A session outlives its kernel, as a Jupyter front end outlives the
// kernels it restarts. When the kernel dies, of its own accord (out of
// memory, a crash) or because it had to be killed (a cell that did not
// stop when interrupted at its timeout), the holder of the session's turn
// destroys its sandbox and opens a fresh kernel of the same template, with
// the session's environment and limits, the way Create does: a premade
// kernel, or a sandbox from the pool's queue, for the session's owner. The
// session keeps its id, owner, TTL and lifetime; its execution count
// starts again at zero, and the old kernel's variables and the files of
// its working directory are gone. The answer of the cell that died says
// so (Execution.StateLost); a kernel that died between cells is replaced
// at once and the next cell's answer says so. Only when no fresh kernel
// can be had is the session lost.

// replaceTimeout bounds the wait for a fresh kernel, the pool's queue
// deadline and a start or restore included.
const replaceTimeout = 2 * time.Minute

// maxIdleDeaths is how many kernels in a row may die between cells, no
// cell ending in between, before the session is lost rather than given
// another: a template whose kernels die of themselves would otherwise loop.
const maxIdleDeaths = 3

// watch replaces l, s's kernel, if it dies while the session's turn is
// free. While the turn is held its holder finds the kernel dead and
// replaces it, or, when the turn frees, passTurnLocked hands it to the
// replacement; no one else ever waits in line for it, so a cell sent
// right after another never finds the session busy with a replacement.
func (m *Manager) watch(s *session, l *lease) {
	select {
	case <-l.k.Lost():
	case <-s.ended:
		return
	}
	m.mu.Lock()
	claimed := m.claimLocked(s, l)
	m.mu.Unlock()
	if claimed {
		m.replaceIdle(s, l)
	}
}

// claimLocked takes s's free turn for the replacement of l, its dead
// kernel, and reports whether it did; replaceIdle must follow.
func (m *Manager) claimLocked(s *session, l *lease) bool {
	if s.held || s.closed || s.lost || s.asleep || s.cur != l || !isLost(l.k) {
		return false
	}
	s.held = true
	s.active++ // a session being replaced does not expire
	return true
}

// replaceIdle replaces l, which died between cells, with the turn
// claimLocked took, and gives the turn back.
func (m *Manager) replaceIdle(s *session, l *lease) {
	defer func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		s.active--
		m.passTurnLocked(s)
	}()
	m.mu.Lock()
	s.idleDeaths++
	n := s.idleDeaths
	m.mu.Unlock()
	why := "the kernel died between cells"
	if n > maxIdleDeaths {
		m.releaseLease(l)
		m.markLost(s, fmt.Sprintf("%s, as its %d kernels before it did, no cell ending in between; it is not replaced again", why, maxIdleDeaths))
		return
	}
	if m.replace(s, l, why) == nil {
		m.mu.Lock()
		s.diedIdle = why
		m.mu.Unlock()
	}
}

// replace destroys old, s's dead kernel, and gives s a fresh one. The
// caller holds s's turn. why says how old died, in words fit for the
// client. If no fresh kernel can be had the session is lost, with why and
// the cause as its reason; a session closed meanwhile is not found.
func (m *Manager) replace(s *session, old *lease, why string) error {
	m.mu.Lock()
	if s.closed || m.closed {
		m.mu.Unlock()
		return fmt.Errorf("session %s closed while its kernel was replaced: %w", s.id, ErrSessionNotFound)
	}
	s.replacing = true
	m.creating.Add(1) // Close waits for the sandbox it may lease
	m.mu.Unlock()
	defer m.creating.Done()
	defer func() {
		m.mu.Lock()
		s.replacing = false
		m.mu.Unlock()
	}()

	// The dead kernel's sandbox goes first: the fresh one may need its
	// place in the pool.
	m.releaseLease(old)
	m.log.Warn("session kernel lost; opening a fresh one", keySessionID, s.id, keyTemplate, s.template,
		keySandboxID, old.sb.ID(), "why", why)
	ctx, cancel := context.WithTimeout(m.ctx, replaceTimeout)
	defer cancel()
	l, err := m.open(ctx, s.owner, s.template, s.env, s.limits, s.network)

	m.mu.Lock()
	if err == nil && s.closed {
		m.mu.Unlock()
		m.releaseLease(l)
		return fmt.Errorf("session %s closed while its kernel was replaced: %w", s.id, ErrSessionNotFound)
	}
	if err != nil {
		m.mu.Unlock()
		if l != nil {
			m.releaseLease(l)
		}
		if m.isClosed(s) {
			return fmt.Errorf("session %s closed while its kernel was replaced: %w", s.id, ErrSessionNotFound)
		}
		m.log.Error("no fresh kernel for a session", keySessionID, s.id, keyTemplate, s.template, "error", err)
		m.markLost(s, why+"; no fresh kernel could be had: "+unavailable(err))
		return fmt.Errorf("replacing the kernel of session %s: %w", s.id, err)
	}
	s.cur, s.count = l, 0
	s.restarts++
	m.mu.Unlock()
	go m.watch(s, l)
	m.log.Info("session continues on a fresh kernel", keySessionID, s.id, keyTemplate, s.template,
		keySandboxID, l.sb.ID(), "start", l.start)
	return nil
}

// unavailable says why no fresh kernel could be had, in words fit for
// the client.
func unavailable(err error) string {
	var saturated *pool.SaturatedError
	switch {
	case errors.Is(err, ErrClosed), errors.Is(err, pool.ErrClosed):
		return "the server is shutting down"
	case errors.As(err, &saturated):
		return "the server is saturated (no sandbox was free within the queue deadline)"
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("none was ready within %s", replaceTimeout)
	}
	return "its sandbox or kernel failed to start"
}

// deathOf says how a cell's kernel died, from its result, in words fit for
// the client; "" when it did not.
func deathOf(res runner.ExecuteResult) string {
	switch {
	case res.Reason == runner.ReasonOOM:
		return "the kernel ran out of memory"
	case !res.Lost && res.Reason != runner.ReasonKernelLost:
		return ""
	case res.Reason == runner.ReasonTimeout:
		return "the cell did not stop when interrupted at its timeout, so its kernel was killed"
	case res.Reason == runner.ReasonOutputLimit:
		return "the cell did not stop when interrupted at its output limit, so its kernel was killed"
	}
	return "the kernel died during the cell"
}

// isLost reports whether k has died.
func isLost(k runner.Kernel) bool {
	select {
	case <-k.Lost():
		return true
	default:
		return false
	}
}
