package kernels

import (
	"context"
	"errors"
	"fmt"

	"github.com/paddock-dev/paddock/runner"
)

// Interrupt stops the cell running in the owner's session id, if any.
// Earlier state stays.
func (m *Manager) Interrupt(ctx context.Context, owner, id string) error {
	s, err := m.pin(owner, id)
	if err != nil {
		return err
	}
	defer m.unpin(s)
	return m.kernelErr(s, "interrupting", s.k.Interrupt(ctx))
}

// Restart replaces the interpreter of the owner's session id with a
// fresh one, keeping the id, the sandbox and its files. A running cell is
// interrupted; the restart goes ahead of queued executions, which then run
// on the fresh interpreter.
func (m *Manager) Restart(ctx context.Context, owner, id string) (Info, error) {
	s, err := m.pin(owner, id)
	if err != nil {
		return Info{}, err
	}
	defer m.unpin(s)
	// In line first, then interrupt: the turn the cell frees is ours.
	interrupt := func() {
		if err := s.k.Interrupt(ctx); err != nil {
			m.log.Warn("interrupting the cell before a restart failed", keySessionID, s.id, "error", err)
		}
	}
	if err := m.acquireTurn(ctx, s, turnFirst, interrupt); err != nil {
		return Info{}, err
	}
	err = m.kernelErr(s, "restarting", s.k.Restart(ctx))
	m.mu.Lock()
	defer m.mu.Unlock()
	m.passTurnLocked(s)
	if err != nil {
		return Info{}, err
	}
	s.count = 0
	m.log.Info("session restarted", keySessionID, s.id)
	return m.infoLocked(s), nil
}

// kernelErr wraps an error of a kernel call on s: a dead kernel marks the
// session lost (ErrSessionLost), a closed session is not found.
func (m *Manager) kernelErr(s *session, op string, err error) error {
	if err == nil {
		return nil
	}
	m.mu.Lock()
	closed := s.closed
	m.mu.Unlock()
	switch {
	case closed:
		return fmt.Errorf("session %s closed while %s: %w", s.id, op, ErrSessionNotFound)
	case errors.Is(err, runner.ErrKernelLost):
		m.markLost(s, "kernel died while "+op)
		return fmt.Errorf("%s session %s: %w", op, s.id, ErrSessionLost)
	}
	return fmt.Errorf("%s session %s: %w", op, s.id, err)
}
