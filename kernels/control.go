package kernels

import (
	"context"
	"errors"
	"fmt"

	"github.com/paddock-dev/paddock/runner"
)

// Interrupt stops the cell running in the owner's session id, if any.
// Earlier state stays. A dead kernel runs no cell: there is nothing to
// interrupt, and the cell it ran says how it ended.
func (m *Manager) Interrupt(ctx context.Context, owner, id string) error {
	s, l, err := m.pin(owner, id)
	if err != nil {
		return err
	}
	defer m.unpin(s)
	if err := l.k.Interrupt(ctx); err != nil && !errors.Is(err, runner.ErrKernelLost) {
		return m.kernelErr(s, "interrupting", err)
	}
	return nil
}

// Restart replaces the interpreter of the owner's session id with a
// fresh one, keeping the id, the sandbox and its files. A running cell is
// interrupted; the restart goes ahead of queued executions, which then run
// on the fresh interpreter. A kernel that died is replaced, as Execute
// does, by a fresh one on a fresh sandbox: its files are gone.
func (m *Manager) Restart(ctx context.Context, owner, id string) (Info, error) {
	s, l, err := m.pin(owner, id)
	if err != nil {
		return Info{}, err
	}
	defer m.unpin(s)
	// In line first, then interrupt: the turn the cell frees is ours.
	interrupt := func() {
		if err := l.k.Interrupt(ctx); err != nil && !errors.Is(err, runner.ErrKernelLost) {
			m.log.Warn("interrupting the cell before a restart failed", keySessionID, s.id, "error", err)
		}
	}
	if err := m.acquireTurn(ctx, s, turnFirst, interrupt); err != nil {
		return Info{}, err
	}
	if l, _, err = m.awake(ctx, s); err != nil {
		m.releaseTurn(s)
		return Info{}, err
	}
	err = l.k.Restart(ctx)
	if errors.Is(err, runner.ErrKernelLost) && !m.isClosed(s) {
		err = m.replace(s, l, "the kernel died before the restart")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.passTurnLocked(s)
	switch {
	case s.lost:
		return Info{}, lostErr(s)
	case s.closed:
		return Info{}, fmt.Errorf("session %s closed while restarting: %w", s.id, ErrSessionNotFound)
	case err != nil:
		return Info{}, fmt.Errorf("restarting session %s: %w", s.id, err)
	}
	s.count = 0
	m.log.Info("session restarted", keySessionID, s.id)
	return m.infoLocked(s), nil
}

// kernelErr wraps an error of a kernel call on s other than a cell: a
// closed session is not found, a lost one ErrSessionLost, and a dead
// kernel, which its watcher replaces, ErrKernelRestarting.
func (m *Manager) kernelErr(s *session, op string, err error) error {
	if err == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case s.closed:
		return fmt.Errorf("session %s closed while %s: %w", s.id, op, ErrSessionNotFound)
	case s.lost:
		return lostErr(s)
	case errors.Is(err, runner.ErrKernelLost):
		return fmt.Errorf("%s session %s: %w", op, s.id, ErrKernelRestarting)
	}
	return fmt.Errorf("%s session %s: %w", op, s.id, err)
}
