package kernels

import "time"

// ReapNow runs one reaper pass and returns how many sessions it closed.
func (m *Manager) ReapNow() int { return m.reapExpired() }

// SetExecuteSlack changes how long past a cell's timeout the kernel may
// take before the session is declared lost. Call it before any Execute.
func (m *Manager) SetExecuteSlack(d time.Duration) { m.execSlack = d }
