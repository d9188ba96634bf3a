package pool

import "time"

// Live cells before sandbox starts. A session's cell is a person or an
// agent waiting on a short answer, and its kernel's threads wake many
// times per cell. A sandbox being restored or torn down puts dozens of
// threads on the host's run queue in short bursts, and on a small
// machine a woken kernel thread can wait tens of milliseconds behind
// them whatever the cgroup weights say (docs/kernel-round-trip.md). So
// while any cell runs (for at most BusyCellMax of it), and for BusyHold
// after the last one ends, at most BusyStartBudget starts run at once.
// Ready sandboxes are still leased at once; only starts wait.

// CellBegin tells the manager that a session's cell has begun; the
// returned function, called once the cell has ended (more calls do
// nothing), tells it the cell is over. A cell still running after
// BusyCellMax stops counting: a long computation is not waiting on a
// short answer, and should not slow everyone's starts for its length.
func (m *Manager) CellBegin() (end func()) {
	c := &cell{}
	m.mu.Lock()
	m.cells++
	m.mu.Unlock()
	var t *time.Timer
	if m.cfg.BusyCellMax > 0 {
		t = time.AfterFunc(m.cfg.BusyCellMax, func() { m.cellOver(c) })
	}
	return func() {
		if t != nil {
			t.Stop()
		}
		m.cellOver(c)
	}
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
