package kernels

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/paddock-dev/paddock/policy"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
)

// CreateOptions configure a new session.
type CreateOptions struct {
	// Template names the pool template to lease a sandbox from. Required.
	Template string
	// TTL is the idle time after which the session expires; zero means
	// Config.DefaultTTL, at most Config.MaxTTL.
	TTL time.Duration
	// Env is added to the interpreter's environment for the whole session.
	Env map[string]string
	// Limits override the template's resource limits field by field, as
	// pool.RunOptions do for a run: a session with any gets a sandbox
	// started for it. The caller checks them against the server's range
	// (policy).
	Limits runner.Limits
}

// Create leases a sandbox of o.Template, opens a kernel on it and returns
// the new session, owned by owner. Over MaxSessions it fails with
// ErrTooManySessions; a sandbox that cannot open kernels is
// runner.ErrNotSupported.
func (m *Manager) Create(ctx context.Context, owner string, o CreateOptions) (Info, error) {
	ttl, err := m.checkCreate(o)
	if err != nil {
		return Info{}, err
	}
	if err := m.reserve(); err != nil {
		return Info{}, err
	}
	defer m.creating.Done()
	s, err := m.open(ctx, owner, o, ttl)

	m.mu.Lock()
	m.pending--
	if err == nil && m.closed {
		err = fmt.Errorf("creating session: %w", ErrClosed)
	}
	if err != nil {
		m.mu.Unlock()
		if s != nil {
			m.release(s)
		}
		return Info{}, err
	}
	m.sessions[s.id] = s
	info := m.infoLocked(s)
	m.mu.Unlock()

	go m.watchLost(s)
	m.log.Info("session created", keySessionID, s.id, keyTemplate, s.template, keySandboxID, s.sb.ID(),
		keyOwner, owner, "ttl", ttl)
	return info, nil
}

func (m *Manager) checkCreate(o CreateOptions) (time.Duration, error) {
	switch {
	case o.Template == "":
		return 0, invalidf("a template is required")
	case !slices.Contains(m.pool.Templates(), o.Template):
		return 0, invalidf("unknown template %q", o.Template)
	}
	if err := policy.OptionalDuration("ttl", o.TTL, time.Millisecond, m.cfg.MaxTTL, m.cfg.DefaultTTL); err != nil {
		return 0, invalid(err)
	}
	if o.TTL == 0 {
		return m.cfg.DefaultTTL, nil
	}
	return o.TTL, nil
}

// reserve takes a slot in the session table for a Create in flight,
// first dropping expired sessions so they do not hold slots.
func (m *Manager) reserve() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return fmt.Errorf("creating session: %w", ErrClosed)
	}
	if len(m.sessions)+m.pending >= m.cfg.MaxSessions {
		for _, s := range m.sweepLocked() {
			go m.end(s, "expired")
		}
	}
	if n := len(m.sessions) + m.pending; n >= m.cfg.MaxSessions {
		return fmt.Errorf("creating session: %d of %d open: %w", n, m.cfg.MaxSessions, ErrTooManySessions)
	}
	m.pending++
	m.creating.Add(1)
	return nil
}

// open leases a sandbox and opens a kernel on it, or takes one whose
// kernel the pool opened ahead (premade). On failure the returned session,
// if any, still holds the sandbox for the caller to release.
func (m *Manager) open(ctx context.Context, owner string, o CreateOptions, ttl time.Duration) (*session, error) {
	if s, ok, err := m.premade(owner, o, ttl); err != nil || ok {
		return s, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(m.ctx, cancel) // Close interrupts the waits
	defer stop()

	lease, err := m.pool.AcquireWith(ctx, o.Template, pool.RunOptions{Limits: o.Limits, Tenant: owner})
	switch {
	case errors.Is(err, pool.ErrUnknownTemplate):
		return nil, invalidf("unknown template %q", o.Template)
	case err != nil && m.ctx.Err() != nil:
		return nil, fmt.Errorf("creating session: %w", ErrClosed)
	case err != nil:
		return nil, fmt.Errorf("creating session: %w", err)
	}
	s := m.newSession(owner, o.Template, ttl, lease)
	opener, ok := lease.Sandbox.(runner.KernelOpener)
	if !ok {
		return s, fmt.Errorf("creating session on %s sandbox: %w", o.Template, runner.ErrNotSupported)
	}
	began := time.Now()
	s.k, err = opener.OpenKernel(ctx, runner.KernelOptions{Env: o.Env})
	s.opening.Kernel = time.Since(began)
	if err != nil {
		if m.ctx.Err() != nil {
			err = ErrClosed
		}
		return s, fmt.Errorf("opening kernel in sandbox %s: %w", lease.Sandbox.ID(), err)
	}
	return s, nil
}

// premade takes a sandbox whose kernel the pool opened before it was
// asked for, when the session needs nothing a kernel must know as it opens:
// a session with an environment, or limits other than the template's,
// opens its kernel itself. ok is false when none was taken.
func (m *Manager) premade(owner string, o CreateOptions, ttl time.Duration) (*session, bool, error) {
	if len(o.Env) > 0 {
		return nil, false, nil
	}
	lease, ok, err := m.pool.AcquireKernel(o.Template, pool.RunOptions{Limits: o.Limits, Tenant: owner})
	switch {
	case errors.Is(err, pool.ErrUnknownTemplate):
		return nil, false, invalidf("unknown template %q", o.Template)
	case err != nil && m.ctx.Err() != nil:
		return nil, false, fmt.Errorf("creating session: %w", ErrClosed)
	case err != nil:
		return nil, false, fmt.Errorf("creating session: %w", err)
	case !ok:
		return nil, false, nil
	}
	s := m.newSession(owner, o.Template, ttl, lease.Lease)
	s.k = lease.Kernel
	return s, true, nil
}

func (m *Manager) newSession(owner, template string, ttl time.Duration, lease pool.Lease) *session {
	now := m.cfg.Now()
	return &session{
		id:       newID(),
		owner:    owner,
		template: template,
		sb:       lease.Sandbox,
		created:  now,
		ttl:      ttl,
		ended:    make(chan struct{}),
		lastUsed: now,
		start:    lease.Kind,
		opening:  OpenTiming{Acquire: lease.Wait, Start: lease.Start},
	}
}

// newID returns 128 random bits in hex.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics instead)
	return hex.EncodeToString(b[:])
}
