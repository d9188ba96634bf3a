package kernels

import "fmt"

// Door notes. A door that keeps its own bookkeeping about a session (the
// E2B door's sandbox: its metadata, tokens and contexts) leaves it as a
// note on the session: an opaque document, kept with the session's record
// in the catalog, so that after a restart the door rebuilds what it knew.

// MaxNoteBytes caps one session's note.
const MaxNoteBytes = 16 << 10

// Note is a session's door note, with the session's owner.
type Note struct {
	SessionID, Owner, Door string
	Doc                    []byte
}

// SetNote leaves door's note doc on the owner's session id, replacing the
// one before; an empty doc removes it.
func (m *Manager) SetNote(owner, id, door string, doc []byte) error {
	if len(doc) > MaxNoteBytes {
		return invalidf("a session's note is at most %d bytes; got %d", MaxNoteBytes, len(doc))
	}
	m.mu.Lock()
	s, err := m.lookupLocked(owner, id)
	if err == nil {
		s.noteDoor, s.note = door, append([]byte(nil), doc...)
		if len(doc) == 0 {
			s.noteDoor, s.note = "", nil
		}
	}
	m.mu.Unlock()
	if err != nil {
		return fmt.Errorf("noting session %s: %w", id, err)
	}
	m.persist(s)
	return nil
}

// Notes lists door's notes on every open session, lost ones included,
// for the door to rebuild its bookkeeping at start.
func (m *Manager) Notes(door string) []Note {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Note
	for _, s := range m.sessions {
		if s.noteDoor == door && len(s.note) > 0 && !s.closed {
			out = append(out, Note{SessionID: s.id, Owner: s.owner, Door: door, Doc: append([]byte(nil), s.note...)})
		}
	}
	return out
}
