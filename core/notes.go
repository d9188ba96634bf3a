package core

import "github.com/paddock-dev/paddock/kernels"

// SessionNote is a door's note on a session, with the session's owner.
type SessionNote = kernels.Note

// SetSessionNote leaves the caller's door's bookkeeping about the
// caller's session id on it (at most kernels.MaxNoteBytes): kept with
// the session, across restarts, until it ends; an empty doc removes it.
func (s *Service) SetSessionNote(c Caller, id string, doc []byte) (err error) {
	defer func() { s.metrics.done(c.Door, "set_session_note", err) }()
	if err := s.sessionsFor(c); err != nil {
		return err
	}
	if err := s.kernels.SetNote(c.Tenant, id, c.Door, doc); err != nil {
		return s.fail(err)
	}
	return nil
}

// SessionNotes lists door's notes on the open sessions of every tenant,
// each with its owner: for that door, at its start, to rebuild what it
// knew of sessions an earlier server left. It serves no caller.
func (s *Service) SessionNotes(door string) []SessionNote { return s.kernels.Notes(door) }
