package pool

import (
	"sync"
	"time"
)

// Live cells before sandbox starts. A session's cell is a person or an
// agent waiting on a short answer, and its kernel's threads wake many
// times per cell. A sandbox being restored or torn down puts dozens of
// threads on the host's run queue in short bursts, and on a small
// machine a woken kernel thread can wait tens of milliseconds behind
// them whatever the cgroup weights say (docs/kernel-round-trip.md). So
// while any cell runs (for at most BusyCellMax of it), and for BusyHold
// after the last one ends, at most BusyStartBudget starts run at once.
// Ready sandboxes are still leased at once; only starts wait.

// CellBegin tells the manager that a cell of session key has begun; the
// returned function, called once the cell has ended (more calls do
// nothing), tells it the cell is over. A session computing for longer
// than BusyCellMax stops counting, whether in one cell or in cells sent
// back to back (each beginning within BusyHold of the last one's end): a
// long computation is not waiting on a short answer, and should not slow
// everyone's starts for its length. Its count starts again after a pause
// longer than BusyHold. An empty key is a session of its own each time.
func (m *Manager) CellBegin(key string) (end func()) {
	c := &cell{}
	m.mu.Lock()
	budget, st := m.cfg.BusyCellMax, m.streakLocked(key)
	if st != nil {
		budget -= m.now().Sub(st.start)
	}
	counted := m.cfg.BusyCellMax <= 0 || budget > 0
	if counted {
		m.cells++
	} else {
		c.over = true // computing too long already: not counted at all
	}
	m.mu.Unlock()
	var t *time.Timer
	if counted && m.cfg.BusyCellMax > 0 {
		t = time.AfterFunc(budget, func() { m.cellOver(c) })
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			if t != nil {
				t.Stop()
			}
			m.cellOver(c)
			m.streakEnded(st)
		})
	}
}

// streak is one session's run of cells, each beginning within BusyHold
// of the last one's end. Its fields are guarded by Manager.mu.
type streak struct {
	start, lastEnd time.Time
	running        int
}

// maxStreaks bounds the streaks kept; past it the ended ones are dropped.
const maxStreaks = 4096

// streakLocked is key's streak with one more cell running, a new one
// unless its last cell ended within BusyHold; nil for an empty key or
// without BusyCellMax.
func (m *Manager) streakLocked(key string) *streak {
	if key == "" || m.cfg.BusyCellMax <= 0 {
		return nil
	}
	now := m.now()
	if m.streaks == nil {
		m.streaks = map[string]*streak{}
	}
	if len(m.streaks) >= maxStreaks {
		for k, s := range m.streaks {
			if s.running == 0 && now.Sub(s.lastEnd) > m.cfg.BusyHold {
				delete(m.streaks, k)
			}
		}
	}
	s := m.streaks[key]
	if s == nil || (s.running == 0 && now.Sub(s.lastEnd) > m.cfg.BusyHold) {
		s = &streak{start: now}
		m.streaks[key] = s
	}
	s.running++
	return s
}

// streakEnded counts one of st's cells over.
func (m *Manager) streakEnded(st *streak) {
	if st == nil {
		return
	}
	m.mu.Lock()
	st.running--
	st.lastEnd = m.now()
	m.mu.Unlock()
}

// cell is one CellBegin's; over is guarded by Manager.mu.
type cell struct{ over bool }

// cellOver stops counting c, once; after the last cell the cap holds for
// BusyHold more.
func (m *Manager) cellOver(c *cell) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c.over {
		return
	}
	c.over = true
	m.cells--
	if m.cells > 0 {
		return
	}
	if m.cfg.BusyHold > 0 {
		m.holding = true
		m.holdGen++
		gen := m.holdGen
		time.AfterFunc(m.cfg.BusyHold, func() { m.holdEnded(gen) })
		return
	}
	m.dispatchLocked()
}

// holdEnded lifts the cap if hold gen is still the latest and no cell
// has begun since.
func (m *Manager) holdEnded(gen uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.holdGen == gen && m.cells == 0 {
		m.holding = false
		m.dispatchLocked()
	}
}

// startBudgetLocked is the starts that may run at once now: StartBudget,
// or BusyStartBudget while a cell runs or the hold after one lasts.
func (m *Manager) startBudgetLocked() int {
	if m.cfg.BusyStartBudget > 0 && (m.cells > 0 || m.holding) {
		return min(m.cfg.StartBudget, m.cfg.BusyStartBudget)
	}
	return m.cfg.StartBudget
}

// StartBudget is the sandbox starts that may run at once now.
func (m *Manager) StartBudget() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.startBudgetLocked()
}
