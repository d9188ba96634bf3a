package pool

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/paddock-dev/paddock/runner"
)

// Admission. Every sandbox start, a refill's or a request's, holds one of
// StartBudget start slots, so that starts never run more at once than the
// machine can. A request that finds no ready sandbox waits as a ticket in
// a fair queue (see fairQueue) until it can be served, first with a ready
// sandbox of its template, else with a start slot; a one-shot run also
// waits there for one of MaxRuns run slots. Refills take a start slot
// only while no request waits, and at most MaxRefills and at most
// StartBudget-1 of them at once (unless the budget is one slot), so that
// a refill never holds the last slot: one is always a request's. While a
// session's cell runs, the budget shrinks to BusyStartBudget (busy.go).
// A ticket not served within QueueDeadline fails with
// ErrSaturated and a retry delay taken from the rate requests were served
// at recently.
const (
	// serveWindow is the time constant of the service rate's moving
	// average.
	serveWindow = 10 * time.Second
	// Bounds of the suggested retry delay.
	minRetryAfter = time.Second
	maxRetryAfter = time.Minute
)

// serveRate is requests served per second, decaying with serveWindow.
type serveRate struct {
	at     time.Time
	perSec float64
}

func (r *serveRate) decay(now time.Time) {
	if !r.at.IsZero() {
		if dt := now.Sub(r.at).Seconds(); dt > 0 {
			r.perSec *= math.Exp(-dt / serveWindow.Seconds())
		}
	}
	r.at = now
}

func (r *serveRate) add(now time.Time) {
	r.decay(now)
	r.perSec += 1 / serveWindow.Seconds()
}

// admit waits until t is served or deadline passes. It returns the ready
// sandbox leased to t, or nil when t got a start slot instead (the caller
// gives it back with endStart).
func (m *Manager) admit(ctx context.Context, t *ticket, deadline time.Time) (runner.Sandbox, error) {
	begin := m.now()
	t.served = make(chan struct{})
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, fmt.Errorf("acquiring %s sandbox: %w", t.tp.tmpl.Name, ErrClosed)
	}
	m.queue.push(t)
	m.dispatchLocked()
	m.mu.Unlock()

	select {
	case <-t.served:
		return t.sb, nil
	default:
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	var err error
	select {
	case <-t.served:
		return t.sb, nil
	case <-ctx.Done():
		err = fmt.Errorf("waiting for a %s sandbox: %w", t.tp.tmpl.Name, ctx.Err())
	case <-m.ctx.Done():
		err = fmt.Errorf("waiting for a %s sandbox: %w", t.tp.tmpl.Name, ErrClosed)
	case <-timer.C:
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.queue.remove(t) {
		return t.sb, nil // served while giving up: take it
	}
	m.dispatchLocked() // a ticket behind t may fit where t did not
	if err != nil {
		return nil, err
	}
	return nil, &SaturatedError{Template: t.tp.tmpl.Name, Waited: m.now().Sub(begin), RetryAfter: m.retryAfterLocked()}
}

// retryAfterLocked is how long the tickets now waiting, and one more,
// take to serve at the recent service rate, within bounds.
func (m *Manager) retryAfterLocked() time.Duration {
	m.served.decay(m.now())
	if m.served.perSec <= 0 {
		return maxRetryAfter
	}
	d := time.Duration(float64(m.queue.len()+1) / m.served.perSec * float64(time.Second))
	return min(max(d.Round(time.Second), minRetryAfter), maxRetryAfter)
}

// dispatchLocked serves every waiting ticket it can, in the queue's fair
// order, then lets waiting fillers start if no request waits.
func (m *Manager) dispatchLocked() {
	if m.closed {
		return
	}
	for m.queue.len() > 0 {
		t := m.queue.pick(m.canServeLocked)
		if t == nil {
			break
		}
		m.serveLocked(t)
	}
	for len(m.refillWait) > 0 && m.refillRoomLocked() {
		ch := m.refillWait[0]
		m.refillWait = m.refillWait[1:]
		m.starts++
		m.refills++
		close(ch)
	}
}

func (m *Manager) canServeLocked(t *ticket) bool {
	if t.run && m.runs >= m.cfg.MaxRuns {
		return false
	}
	return (!t.custom && m.hasReadyLocked(t.tp)) || m.starts < m.startBudgetLocked()
}

// serveLocked gives t a ready sandbox if one is live, else a start slot.
func (m *Manager) serveLocked(t *ticket) {
	if t.run {
		m.runs++
	}
	m.served.add(m.now())
	if !t.custom {
		if sb := m.leaseReadyLocked(t.tp); sb != nil {
			t.sb = sb
			close(t.served)
			return
		}
	}
	m.starts++
	close(t.served)
}

// refillRoomLocked reports whether a refill may take a start slot now:
// only while no request waits, and never the budget's every slot.
func (m *Manager) refillRoomLocked() bool {
	budget := m.startBudgetLocked()
	limit := m.cfg.MaxRefills
	if budget > 1 {
		limit = min(limit, budget-1)
	}
	return m.queue.len() == 0 && m.refills < limit && m.starts < budget
}

// hasReadyLocked reports whether tp has a ready sandbox, dropping (and
// destroying) dead ones at the head of its list.
func (m *Manager) hasReadyLocked(tp *tpool) bool {
	for len(tp.ready) > 0 {
		e := tp.ready[0]
		if !isDone(e.sb) {
			return true
		}
		tp.ready[0] = nil
		tp.ready = tp.ready[1:]
		close(e.taken)
		m.log.Warn("ready sandbox was dead; skipping it", keyTemplate, tp.tmpl.Name, keySandboxID, e.sb.ID())
		m.destroy(e.sb)
	}
	return false
}

// leaseReadyLocked leases tp's oldest live ready sandbox, nil when none.
func (m *Manager) leaseReadyLocked(tp *tpool) runner.Sandbox {
	if !m.hasReadyLocked(tp) {
		return nil
	}
	e := tp.ready[0]
	tp.ready[0] = nil
	tp.ready = tp.ready[1:]
	close(e.taken)
	tp.inUse++
	tp.hits++
	m.recordTakeLocked(tp, false)
	m.leases[e.sb.ID()] = tp
	tp.poke()
	return e.sb
}

// endStart gives back a start slot; refill says a filler held it.
func (m *Manager) endStart(refill bool) {
	m.mu.Lock()
	m.starts--
	if refill {
		m.refills--
	}
	m.dispatchLocked()
	m.mu.Unlock()
}

// endRun gives back a run slot.
func (m *Manager) endRun() {
	m.mu.Lock()
	m.runs--
	m.dispatchLocked()
	m.mu.Unlock()
}

// refillSlot waits for a start slot for a refill; the caller gives it
// back with endStart(true).
func (m *Manager) refillSlot() error {
	ch := make(chan struct{})
	m.mu.Lock()
	m.refillWait = append(m.refillWait, ch)
	m.dispatchLocked()
	m.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-m.ctx.Done():
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, w := range m.refillWait {
		if w == ch {
			m.refillWait = append(m.refillWait[:i], m.refillWait[i+1:]...)
			return m.ctx.Err()
		}
	}
	// Granted while closing: give it back.
	m.starts--
	m.refills--
	return m.ctx.Err()
}
