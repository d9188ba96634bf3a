package kernels

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"
)

// MaxCheckpoints caps the named checkpoints one session keeps.
const MaxCheckpoints = 8

// ErrCheckpointNotFound means the session keeps no checkpoint of that name.
var ErrCheckpointNotFound = errors.New("no such checkpoint")

var checkpointName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Checkpoint is a saved point of a session, to rewind it to.
type Checkpoint struct {
	Name           string
	ExecutionCount int
	Bytes          int64
	CreatedAt      time.Time
}

// checkpoint is a session's saved point on disk.
type checkpoint struct {
	Checkpoint
	dir string
}

// SaveCheckpoint saves the owner's session id as it is now under name,
// while it runs on: a later Rewind brings it back to this point. A name
// already used is replaced. At most MaxCheckpoints are kept per session;
// they go with the session.
func (m *Manager) SaveCheckpoint(ctx context.Context, owner, id, name string) (Checkpoint, error) {
	if !checkpointName.MatchString(name) {
		return Checkpoint{}, invalidf("a checkpoint name is 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit; got %q", name)
	}
	if !m.Hibernation() {
		return Checkpoint{}, fmt.Errorf("checkpointing session %s: %w", id, ErrHibernationOff)
	}
	s, _, err := m.pin(owner, id)
	if err != nil {
		return Checkpoint{}, err
	}
	defer m.unpin(s)
	m.mu.Lock()
	_, replacing := s.checkpoints[name]
	full := !replacing && len(s.checkpoints) >= MaxCheckpoints
	m.mu.Unlock()
	if full {
		return Checkpoint{}, invalidf("session %s keeps %d checkpoints, the most a session may; delete one first", id, MaxCheckpoints)
	}
	dir, count, err := m.keep(ctx, s)
	if err != nil {
		return Checkpoint{}, err
	}
	size, _, err := checksum(dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return Checkpoint{}, fmt.Errorf("checkpointing session %s: %w", id, err)
	}
	c := &checkpoint{Checkpoint: Checkpoint{Name: name, ExecutionCount: count, Bytes: size, CreatedAt: m.cfg.Now()}, dir: dir}
	m.mu.Lock()
	if s.closed || s.lost {
		m.mu.Unlock()
		_ = os.RemoveAll(dir)
		return Checkpoint{}, fmt.Errorf("session %s: %w", id, ErrSessionNotFound)
	}
	old := s.checkpoints[name]
	if s.checkpoints == nil {
		s.checkpoints = map[string]*checkpoint{}
	}
	s.checkpoints[name] = c
	m.sleepBytes += size
	if old != nil {
		m.sleepBytes -= old.Bytes
	}
	m.mu.Unlock()
	if old != nil {
		_ = os.RemoveAll(old.dir)
	}
	m.persist(s)
	return c.Checkpoint, nil
}

// Checkpoints lists the owner's session id's checkpoints, oldest first.
func (m *Manager) Checkpoints(owner, id string) ([]Checkpoint, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.lookupLocked(owner, id)
	if err != nil {
		return nil, err
	}
	out := []Checkpoint{}
	for _, c := range s.checkpoints {
		out = append(out, c.Checkpoint)
	}
	slices.SortFunc(out, func(a, b Checkpoint) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, nil
}

// Rewind brings the owner's session id back to its checkpoint name: a
// sandbox woken from the checkpoint replaces the session's, with the
// variables, files and execution count it had then. The checkpoint stays,
// to rewind to again. It waits for the session's turn.
func (m *Manager) Rewind(ctx context.Context, owner, id, name string) (Info, error) {
	s, _, err := m.pin(owner, id)
	if err != nil {
		return Info{}, err
	}
	defer m.unpin(s)
	if err := m.acquireTurn(ctx, s, turnQueue, nil); err != nil {
		return Info{}, err
	}
	err = m.rewind(ctx, s, name)
	m.releaseTurn(s)
	if err != nil {
		return Info{}, err
	}
	return m.info(s)
}

func (m *Manager) rewind(ctx context.Context, s *session, name string) error {
	m.mu.Lock()
	c, cmds := s.checkpoints[name], s.commands
	m.mu.Unlock()
	switch {
	case c == nil:
		return fmt.Errorf("session %s: checkpoint %q: %w", s.id, name, ErrCheckpointNotFound)
	case cmds > 0:
		return fmt.Errorf("session %s: %d commands running: %w", s.id, cmds, ErrBusy)
	}
	l, _, err := m.wakeKernel(ctx, s, c.dir, c.ExecutionCount)
	if err != nil {
		if l != nil {
			m.releaseLease(l)
		}
		return fmt.Errorf("rewinding session %s: %w", s.id, err)
	}
	m.mu.Lock()
	old, wasAsleep := s.cur, s.asleep
	s.cur, s.count = l, c.ExecutionCount
	m.mu.Unlock()
	if wasAsleep {
		m.dropImage(s)
	} else {
		m.releaseLease(old)
	}
	go m.watch(s, l)
	m.persist(s)
	return nil
}

// dropCheckpoints removes a session's checkpoints once it has ended.
func (m *Manager) dropCheckpoints(s *session) {
	m.mu.Lock()
	cs := s.checkpoints
	s.checkpoints = nil
	for _, c := range cs {
		m.sleepBytes -= c.Bytes
	}
	m.mu.Unlock()
	for _, c := range cs {
		_ = os.RemoveAll(c.dir)
	}
}
