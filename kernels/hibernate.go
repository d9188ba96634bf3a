package kernels

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
)

// Hibernation. A session idle for HibernateAfter, or paused by its owner,
// is saved whole (its interpreter's memory, the files of its sandbox) into
// an image under HibernateDir and its sandbox is freed. The next call that
// needs the kernel wakes it, holding the session's turn: a sandbox is
// restored from the image, takes over the kernel it had, and the call goes
// on as if nothing had happened, but slower. TTL and lifetime run on while
// a session sleeps. Images count against HibernateBudget; past it the
// oldest sleeping sessions are lost, and their next call says why. An
// image that cannot be read back, or is not this session's, loses its
// session (ErrSessionLost), never gives it an empty kernel.

// StateHibernated is the state of a session saved to disk, its sandbox
// freed.
const StateHibernated = "hibernated"

// ErrHibernationOff means the server keeps no hibernated sessions (no
// HibernateDir, or a runtime that cannot save sandboxes).
var ErrHibernationOff = errors.New("hibernation is off on this server")

// imageMetaFile is written next to a session's image: whose it is and the
// checksum its files must still have.
const imageMetaFile = "paddock-session.json"

// imageMeta binds an image to its session.
type imageMeta struct {
	Session  string `json:"session"`
	Owner    string `json:"owner"`
	Template string `json:"template"`
	Count    int    `json:"execution_count"`
	Bytes    int64  `json:"bytes"`
	CRC32C   uint32 `json:"crc32c"`
}

// Wake says how a call found its session: Resumed when it had to be woken,
// and how long that took.
type Wake struct {
	Resumed bool
	Took    time.Duration
}

// Hibernation reports whether this manager can hibernate sessions.
func (m *Manager) Hibernation() bool {
	return m.cfg.HibernateDir != "" && m.pool.CanHibernate()
}

// Pause hibernates the owner's session id now. A session running a cell
// or commands is ErrBusy; a sleeping one stays as it is.
func (m *Manager) Pause(ctx context.Context, owner, id string) (Info, error) {
	if !m.Hibernation() {
		return Info{}, fmt.Errorf("pausing session %s: %w", id, ErrHibernationOff)
	}
	s, _, err := m.pin(owner, id)
	if err != nil {
		return Info{}, err
	}
	defer m.unpin(s)
	if err := m.acquireTurn(ctx, s, turnNow, nil); err != nil {
		return Info{}, err
	}
	if err := m.pause(ctx, s); err != nil {
		m.releaseTurn(s)
		return Info{}, err
	}
	m.releaseTurn(s)
	return m.info(s)
}

// pause hibernates s for Pause, which holds its turn, unless it sleeps.
func (m *Manager) pause(ctx context.Context, s *session) error {
	m.mu.Lock()
	asleep, cmds, others := s.asleep, s.commands, s.active-1
	m.mu.Unlock()
	switch {
	case asleep:
		return nil
	case cmds > 0:
		return fmt.Errorf("session %s: %d commands running: %w", s.id, cmds, ErrBusy)
	case others > 0:
		return fmt.Errorf("session %s: %d other calls in progress: %w", s.id, others, ErrBusy)
	}
	return m.sleep(ctx, s)
}

// Resume wakes the owner's session id if it sleeps.
func (m *Manager) Resume(ctx context.Context, owner, id string) (Info, Wake, error) {
	s, _, err := m.pin(owner, id)
	if err != nil {
		return Info{}, Wake{}, err
	}
	defer m.unpin(s)
	if err := m.acquireTurn(ctx, s, turnQueue, nil); err != nil {
		return Info{}, Wake{}, err
	}
	_, w, err := m.awake(ctx, s)
	m.releaseTurn(s)
	if err != nil {
		return Info{}, w, err
	}
	info, err := m.info(s)
	return info, w, err
}

func (m *Manager) info(s *session) (Info, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.usableLocked(s); err != nil {
		return Info{}, err
	}
	return m.infoLocked(s), nil
}

// sleep hibernates s; the caller holds its turn. A failure to save leaves
// the session on its sandbox, if that still runs; if it stopped, the
// kernel's watcher replaces it as for any kernel that died.
func (m *Manager) sleep(ctx context.Context, s *session) error {
	m.mu.Lock()
	l, gen := s.cur, s.sleeps+1
	s.sleeps, s.pausing = gen, true
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		s.pausing = false
		m.mu.Unlock()
	}()
	dir := filepath.Join(m.cfg.HibernateDir, fmt.Sprintf("%s-%d", s.id, gen))
	begin := time.Now()
	if err := m.pool.Hibernate(ctx, l.sb, dir); err != nil {
		_ = os.RemoveAll(dir)
		m.log.Warn("hibernating a session failed", keySessionID, s.id, keySandboxID, l.sb.ID(), "error", err)
		return fmt.Errorf("hibernating session %s: %w", s.id, err)
	}
	l.releaseOnce.Do(l.dropNet) // the pool released the sandbox
	m.mu.Lock()
	meta := imageMeta{Session: s.id, Owner: s.owner, Template: s.template, Count: s.count}
	m.mu.Unlock()
	var err error
	meta.Bytes, meta.CRC32C, err = checksum(dir)
	if err == nil {
		err = writeMeta(dir, meta)
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		m.markLost(s, fmt.Sprintf("its state could not be saved: %v", err))
		return lostErrOf(m, s)
	}
	m.mu.Lock()
	s.asleep, s.image, s.imageBytes, s.sleptAt = true, dir, meta.Bytes, m.cfg.Now()
	m.sleepBytes += meta.Bytes
	evict := m.overBudgetLocked()
	m.mu.Unlock()
	m.persist(s)
	m.log.Info("session hibernated", keySessionID, s.id, keyTemplate, s.template, "bytes", meta.Bytes,
		"took", time.Since(begin).Round(time.Millisecond))
	for _, o := range evict {
		m.markLost(o, fmt.Sprintf("its hibernated state was dropped: hibernated sessions are kept within %d bytes of disk, and it was the oldest", m.cfg.HibernateBudget))
	}
	return nil
}

// overBudgetLocked picks the oldest sleeping sessions whose images must go
// for the rest to fit in HibernateBudget.
func (m *Manager) overBudgetLocked() []*session {
	if m.cfg.HibernateBudget <= 0 || m.sleepBytes <= m.cfg.HibernateBudget {
		return nil
	}
	var asleep []*session
	for _, s := range m.sessions {
		if s.asleep && !s.lost {
			asleep = append(asleep, s)
		}
	}
	slices.SortFunc(asleep, func(a, b *session) int { return a.sleptAt.Compare(b.sleptAt) })
	var out []*session
	over := m.sleepBytes - m.cfg.HibernateBudget
	for _, s := range asleep {
		if over <= 0 {
			break
		}
		over -= s.imageBytes
		out = append(out, s)
	}
	return out
}

// awake returns s's kernel, waking s first if it sleeps; the caller holds
// its turn. An image that is damaged, another session's, or that holds no
// kernel loses the session; a wake that could not get a sandbox (the
// pool is saturated, the call ended) leaves it asleep.
func (m *Manager) awake(ctx context.Context, s *session) (*lease, Wake, error) {
	m.mu.Lock()
	cur, asleep, dir, count := s.cur, s.asleep, s.image, s.count
	m.mu.Unlock()
	if !asleep {
		return cur, Wake{}, nil
	}
	begin := time.Now()
	lose := func(why string) (*lease, Wake, error) {
		m.markLost(s, why)
		return nil, Wake{}, lostErrOf(m, s)
	}
	if err := checkImage(dir, s, count); err != nil {
		return lose(fmt.Sprintf("its hibernated state cannot be restored: %v", err))
	}
	checked := time.Since(begin)
	m.mu.Lock()
	m.waking++
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.waking--
		m.mu.Unlock()
	}()
	if err := m.makeRoom("waking session " + s.id); err != nil {
		return nil, Wake{}, err
	}
	l, imageFault, err := m.wakeKernel(ctx, s, dir, count)
	if err != nil {
		if l != nil {
			m.releaseLease(l)
		}
		if !imageFault {
			return nil, Wake{}, fmt.Errorf("waking session %s: %w", s.id, err)
		}
		return lose(fmt.Sprintf("its hibernated state could not be restored: %v", err))
	}
	l.opening.Kernel = time.Since(begin) - checked - l.opening.Acquire
	m.mu.Lock()
	s.cur, s.asleep, s.image = l, false, ""
	m.sleepBytes -= s.imageBytes
	s.imageBytes = 0
	m.mu.Unlock()
	go func() { _ = os.RemoveAll(dir) }()
	go m.watch(s, l)
	m.persist(s)
	w := Wake{Resumed: true, Took: time.Since(begin)}
	m.log.Info("session resumed", keySessionID, s.id, keyTemplate, s.template, keySandboxID, l.sb.ID(),
		"took", w.Took.Round(time.Millisecond), "check", checked.Round(time.Millisecond),
		"queue", (l.opening.Acquire - l.opening.Start).Round(time.Millisecond), "restore", l.opening.Start.Round(time.Millisecond),
		"attach", l.opening.Kernel.Round(time.Millisecond))
	return l, w, nil
}

// wakeKernel leases a sandbox of s's template woken from the image in
// dir and takes over its kernel, which must be at execution count. On
// failure the returned lease, if any, still holds the sandbox; lost says
// the failure is the image's (not the pool's, nor the call's).
func (m *Manager) wakeKernel(ctx context.Context, s *session, dir string, count int) (l *lease, lost bool, err error) {
	pl, err := m.pool.Wake(ctx, s.template, dir, pool.RunOptions{Limits: s.limits, Tenant: s.owner, Network: s.network != ""})
	if err != nil {
		transient := ctx.Err() != nil || m.ctx.Err() != nil || errors.Is(err, pool.ErrSaturated) || errors.Is(err, pool.ErrClosed)
		return nil, !transient, err
	}
	l = &lease{sb: pl.Sandbox, start: pl.Kind, opening: OpenTiming{Acquire: pl.Wait, Start: pl.Start}}
	if err := m.serveNetwork(l, s.network); err != nil {
		return l, false, err
	}
	attacher, ok := pl.Sandbox.(runner.KernelAttacher)
	if !ok {
		return l, true, errors.New("its sandbox cannot hand back a kernel")
	}
	var got int
	l.k, got, err = attacher.AttachKernel(ctx)
	switch {
	case err != nil:
		return l, true, fmt.Errorf("its restored sandbox holds no kernel: %w", err)
	case got != count:
		return l, true, fmt.Errorf("its restored kernel is at execution %d, not %d", got, count)
	}
	return l, false, nil
}

// dropAll removes a session's image and checkpoints once it has ended.
func (m *Manager) dropAll(s *session) {
	m.dropImage(s)
	m.dropCheckpoints(s)
}

// dropImage removes a session's image.
func (m *Manager) dropImage(s *session) {
	m.mu.Lock()
	dir := s.image
	if s.asleep {
		s.asleep, s.image = false, ""
		m.sleepBytes -= s.imageBytes
		s.imageBytes = 0
	}
	m.mu.Unlock()
	if dir != "" {
		if err := os.RemoveAll(dir); err != nil {
			m.log.Warn("removing a hibernated session's image failed", keySessionID, s.id, "error", err)
		}
	}
}

// hibernateIdle hibernates, one at a time, the sessions idle for at least
// HibernateAfter, and those past their idle TTL that hibernate at their
// expiry: no call in progress or waiting, no command running.
func (m *Manager) hibernateIdle() int {
	if !m.Hibernation() {
		return 0
	}
	m.mu.Lock()
	now := m.cfg.Now()
	var idle []*session
	atExpiry := map[*session]bool{}
	for _, s := range m.sessions {
		due := m.cfg.HibernateAfter > 0 && now.Sub(s.lastUsed) >= m.cfg.HibernateAfter
		if m.sleepsAtExpiryLocked(s, now) {
			due, atExpiry[s] = true, true
		}
		if !s.held && s.active == 0 && s.commands == 0 && !s.asleep && !s.lost && !s.closed &&
			due && !m.expiredLocked(s, now) && !isLost(s.cur.k) {
			s.held = true // the turn, as a call would take it
			s.active++    // no expiry while it is saved
			s.pausing = true
			idle = append(idle, s)
		}
	}
	m.mu.Unlock()
	n := 0
	for _, s := range idle {
		if m.sleep(m.ctx, s) == nil {
			n++
		} else if atExpiry[s] {
			m.mu.Lock()
			s.sleepAtExpiry = false // it ends as expired at the next sweep
			m.mu.Unlock()
		}
		m.mu.Lock()
		s.active--
		m.passTurnLocked(s)
		m.mu.Unlock()
	}
	return n
}

// pinAwake is pin for a call that needs the kernel but not the turn (a
// file, a question, a command): a session that sleeps, or is being put to
// sleep, is woken first, its turn taken at the head of the line and given
// back.
func (m *Manager) pinAwake(ctx context.Context, owner, id string) (*session, *lease, error) {
	s, l, err := m.pin(owner, id)
	if err != nil {
		return nil, nil, err
	}
	m.mu.Lock()
	sleepy := s.asleep || s.pausing
	m.mu.Unlock()
	if !sleepy {
		return s, l, nil
	}
	if err := m.acquireTurn(ctx, s, turnFirst, nil); err != nil {
		m.unpin(s)
		return nil, nil, err
	}
	l, _, err = m.awake(ctx, s)
	m.releaseTurn(s)
	if err != nil {
		m.unpin(s)
		return nil, nil, err
	}
	return s, l, nil
}

func lostErrOf(m *Manager, s *session) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return lostErr(s)
}

// checksum sums the sizes and the CRC-32C of the files of an image, in
// name order, the metadata file left out.
func checksum(dir string) (int64, uint32, error) {
	h := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == imageMetaFile {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		_, _ = io.WriteString(h, rel+"\x00")
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		n, err := io.Copy(h, f)
		total += n
		return err
	})
	return total, h.Sum32(), err
}

func writeMeta(dir string, meta imageMeta) error {
	b, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, imageMetaFile), b, 0o600)
}

// checkImage checks that dir holds s's image as it was saved, at
// execution count.
func checkImage(dir string, s *session, count int) error {
	b, err := os.ReadFile(filepath.Join(dir, imageMetaFile))
	if err != nil {
		return fmt.Errorf("reading its metadata: %w", err)
	}
	var meta imageMeta
	if err := json.Unmarshal(b, &meta); err != nil {
		return fmt.Errorf("decoding its metadata: %w", err)
	}
	if meta.Session != s.id || meta.Owner != s.owner || meta.Template != s.template || meta.Count != count {
		return errors.New("the image is not this session's")
	}
	size, sum, err := checksum(dir)
	switch {
	case err != nil:
		return fmt.Errorf("reading the image: %w", err)
	case size != meta.Bytes || sum != meta.CRC32C:
		return fmt.Errorf("the image is damaged (%d bytes, checksum %08x; saved %d bytes, %08x)", size, sum, meta.Bytes, meta.CRC32C)
	}
	return nil
}

// prepareHibernateDir makes dir, the owner's only, and removes what is in
// it but the names in keep: the images and checkpoints of sessions that
// no catalog record names belong to no one any more.
func prepareHibernateDir(dir string, keep map[string]bool) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("kernels config: hibernate dir: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("kernels config: hibernate dir: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("kernels config: hibernate dir: %w", err)
	}
	for _, e := range entries {
		if keep[e.Name()] {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("kernels config: clearing hibernate dir: %w", err)
		}
	}
	return nil
}
