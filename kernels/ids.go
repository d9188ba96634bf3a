package kernels

// newID is a new session's id: Config.IDPrefix, then random hex digits,
// 32 in all.
func (m *Manager) newID() string {
	id := newID()
	p := m.cfg.IDPrefix
	if len(p) >= len(id) {
		return id
	}
	return p + id[len(p):]
}
