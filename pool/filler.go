package pool

import (
	"slices"
	"time"

	"github.com/paddock-dev/paddock/runner"
)

// fill keeps tp's ready list at its target size, one start at a time,
// until Close. Failed starts are retried with capped exponential backoff;
// a failure streak is logged once when it begins and once when it ends.
func (m *Manager) fill(tp *tpool) {
	defer m.fillers.Done()
	log := m.log.With(keyTemplate, tp.tmpl.Name)
	streak := 0
	for {
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return
		}
		// While its snapshot is being built, a template's pool waits for
		// it rather than cold-starting: restores are several times faster.
		need := len(tp.ready) < tp.target && tp.snap != snapBuilding && m.budgetAllowsLocked(tp)
		if need {
			tp.starting++
			m.holdLocked()
		}
		m.mu.Unlock()

		if !need {
			select {
			case <-m.ctx.Done():
				return
			case <-tp.wake:
			}
			continue
		}

		began := m.now()
		sb, err := m.refill(tp)
		m.mu.Lock()
		tp.starting--
		if err == nil {
			tp.demand.refilled(m.now().Sub(began))
		}
		if err != nil {
			m.unholdLocked()
			if m.closed {
				m.mu.Unlock()
				return
			}
			tp.failures++
			m.mu.Unlock()
			streak++
			delay := m.backoff(streak)
			if streak == 1 {
				log.Warn("starting pooled sandbox failed; retrying with backoff", "error", err, "retry_in", delay)
			} else {
				log.Debug("starting pooled sandbox failed again", "error", err, "failures", streak, "retry_in", delay)
			}
			if m.wait(m.ctx, delay) != nil {
				return
			}
			continue
		}
		tp.healthy = true
		if m.closed {
			m.mu.Unlock()
			m.destroy(sb)
			return
		}
		e := &entry{sb: sb, taken: make(chan struct{})}
		tp.ready = append(tp.ready, e)
		m.dispatchLocked() // a request may be waiting for it
		m.mu.Unlock()
		go m.watch(tp, e)
		tp.pokeKernels() // they wait for the ready list

		if streak > 0 {
			log.Info("pooled sandbox starts recovered", "failures", streak)
			streak = 0
		}
	}
}

// backoff returns the wait after the n-th consecutive failure (n ≥ 1):
// backoffMin doubled n-1 times, capped at backoffMax.
// refill makes one sandbox for the pool, holding a start slot that
// requests come before (see admit.go).
func (m *Manager) refill(tp *tpool) (runner.Sandbox, error) {
	if err := m.refillSlot(); err != nil {
		return nil, err
	}
	defer m.endStart(true)
	sb, _, err := m.make(m.ctx, tp, false)
	return sb, err
}

func (m *Manager) backoff(n int) time.Duration {
	d := m.backoffMin
	for i := 1; i < n && d < m.backoffMax; i++ {
		d *= 2
	}
	return min(d, m.backoffMax)
}

// watch removes e from tp's ready list and destroys its sandbox if the
// sandbox dies while waiting; it returns once e is taken.
func (m *Manager) watch(tp *tpool, e *entry) {
	select {
	case <-e.taken:
		return
	case <-e.sb.Done():
	}
	m.mu.Lock()
	removed := removeEntry(&tp.ready, e)
	if removed {
		close(e.taken)
	}
	m.mu.Unlock()
	if !removed {
		return
	}
	m.log.Warn("ready sandbox died; replacing it", keyTemplate, tp.tmpl.Name, keySandboxID, e.sb.ID())
	m.destroy(e.sb)
	tp.poke()
}

// removeEntry deletes e from *list, reporting whether it was there.
func removeEntry[E comparable](list *[]E, e E) bool {
	i := slices.Index(*list, e)
	if i < 0 {
		return false
	}
	*list = slices.Delete(*list, i, i+1)
	return true
}
