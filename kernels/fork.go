package kernels

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/paddock-dev/paddock/runner"
)

// MaxFork caps the sessions one Fork makes.
const MaxFork = 100

// ErrCannotFork means the session's interpreter cannot be cloned: its
// random generator cannot be reseeded (Node's), so clones would draw the
// same numbers.
var ErrCannotFork = errors.New("this session's interpreter cannot be forked")

// Fork gives the owner count new sessions that start from the exact state
// of its session id: one image of its sandbox is saved while it runs on,
// and each child is woken from it, takes over the kernel, and reseeds its
// random generators, so that children share no randomness. Children have
// the parent's template, environment, limits and TTL, and its execution
// count; each counts against MaxSessions. The parent waits for its turn
// (behind a running cell) and keeps running; a hibernated parent is woken
// first. Any child that cannot be made fails the whole fork, and the
// children made so far are closed.
func (m *Manager) Fork(ctx context.Context, owner, id string, count int) ([]Info, error) {
	if count < 1 || count > MaxFork {
		return nil, invalidf("count must be between 1 and %d; got %d", MaxFork, count)
	}
	if !m.Hibernation() {
		return nil, fmt.Errorf("forking session %s: %w", id, ErrHibernationOff)
	}
	s, _, err := m.pin(owner, id)
	if err != nil {
		return nil, err
	}
	defer m.unpin(s)
	dir, parentCount, err := m.keep(ctx, s)
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()

	var children []*session
	fail := func(err error) ([]Info, error) {
		for _, c := range children {
			m.mu.Lock()
			delete(m.sessions, c.id)
			c.closed = true
			m.mu.Unlock()
			m.end(c, "fork failed")
		}
		return nil, err
	}
	for range count {
		c, err := m.child(ctx, s, dir, parentCount)
		if err != nil {
			return fail(err)
		}
		children = append(children, c)
	}
	infos := make([]Info, len(children))
	m.mu.Lock()
	for i, c := range children {
		infos[i] = m.infoLocked(c)
	}
	m.mu.Unlock()
	m.log.Info("session forked", keySessionID, s.id, keyTemplate, s.template, "children", count)
	return infos, nil
}

// keep saves s's image for its children, holding its turn meanwhile, and
// returns the image and the execution count it is at.
func (m *Manager) keep(ctx context.Context, s *session) (string, int, error) {
	if err := m.acquireTurn(ctx, s, turnQueue, nil); err != nil {
		return "", 0, err
	}
	defer m.releaseTurn(s)
	l, _, err := m.awake(ctx, s)
	if err != nil {
		return "", 0, err
	}
	m.mu.Lock()
	cmds, n := s.commands, s.count
	s.sleeps++
	dir := filepath.Join(m.cfg.HibernateDir, fmt.Sprintf("%s-saved-%d", s.id, s.sleeps))
	m.mu.Unlock()
	if cmds > 0 {
		return "", 0, fmt.Errorf("session %s: %d commands running: %w", s.id, cmds, ErrBusy)
	}
	if err := m.pool.Keep(ctx, l.sb, dir); err != nil {
		_ = os.RemoveAll(dir)
		return "", 0, fmt.Errorf("saving session %s to fork it: %w", s.id, err)
	}
	return dir, n, nil
}

// child makes one session of the parent's owner woken from its image at
// dir, at execution count, reseeded, and puts it in the table.
func (m *Manager) child(ctx context.Context, parent *session, dir string, count int) (*session, error) {
	if err := m.reserve(); err != nil {
		return nil, err
	}
	defer m.creating.Done()
	begin := time.Now()
	err := m.makeRoom("forking session " + parent.id)
	var l *lease
	if err == nil {
		l, err = m.wakeChild(ctx, parent, dir, count)
	}
	m.mu.Lock()
	m.pending--
	if err == nil && m.closed {
		err = ErrClosed
	}
	if err != nil {
		m.mu.Unlock()
		if l != nil {
			m.releaseLease(l)
		}
		return nil, err
	}
	l.opening.Kernel = time.Since(begin) - l.opening.Acquire
	c := m.newSession(parent.owner, CreateOptions{Template: parent.template, Env: parent.env, Limits: parent.limits,
		HibernateAtExpiry: parent.sleepAtExpiry, Network: parent.network}, parent.ttl, l)
	c.count = count
	m.sessions[c.id] = c
	m.mu.Unlock()
	go m.watch(c, l)
	m.persist(c)
	return c, nil
}

// wakeChild wakes a sandbox from dir and makes its kernel a clone's: at
// the parent's execution count, with fresh random seeds. On failure the
// returned lease, if any, still holds the sandbox.
func (m *Manager) wakeChild(ctx context.Context, parent *session, dir string, count int) (*lease, error) {
	l, _, err := m.wakeKernel(ctx, parent, dir, count)
	if err != nil {
		return l, fmt.Errorf("forking session %s: %w", parent.id, err)
	}
	r, ok := l.k.(runner.Reseeder)
	if !ok {
		return l, fmt.Errorf("forking session %s: %w", parent.id, ErrCannotFork)
	}
	if err := r.Reseed(ctx); err != nil {
		if errors.Is(err, runner.ErrCannotReseed) {
			return l, fmt.Errorf("forking session %s: %w: %w", parent.id, ErrCannotFork, err)
		}
		return l, fmt.Errorf("forking session %s: reseeding the clone: %w", parent.id, err)
	}
	return l, nil
}
