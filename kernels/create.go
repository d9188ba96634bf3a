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
	// HibernateAtExpiry makes the session hibernate when its idle TTL
	// runs out, where it would end (E2B's pause on timeout): asleep, it
	// ends only at MaxLifetime, and its next call or Resume wakes it with
	// its TTL counted from then. It needs hibernation on
	// (ErrHibernationOff). Should saving it fail, it ends as expired.
	HibernateAtExpiry bool
	// Network is the egress policy of the session's sandboxes, opaque
	// here and served by the manager's NetworkFunc (network.go); empty:
	// no network.
	Network string
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
	err = m.makeRoom("creating session")
	var l *lease
	if err == nil {
		l, err = m.open(ctx, owner, o.Template, o.Env, o.Limits, o.Network)
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
		if errors.Is(err, ErrInvalid) {
			return Info{}, err
		}
		return Info{}, fmt.Errorf("creating session: %w", err)
	}
	s := m.newSession(owner, o, ttl, l)
	m.sessions[s.id] = s
	info := m.infoLocked(s)
	m.mu.Unlock()

	go m.watch(s, l)
	m.persist(s)
	m.log.Info("session created", keySessionID, s.id, keyTemplate, s.template, keySandboxID, l.sb.ID(),
		keyOwner, owner, "ttl", ttl)
	return info, nil
}

func (m *Manager) checkCreate(o CreateOptions) (time.Duration, error) {
	switch {
	case o.Template == "":
		return 0, invalidf("a template is required")
	case !slices.Contains(m.pool.Templates(), o.Template):
		return 0, invalidf("unknown template %q", o.Template)
	case o.HibernateAtExpiry && !m.Hibernation():
		return 0, fmt.Errorf("a session that hibernates at its expiry: %w", ErrHibernationOff)
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

// open leases a sandbox of template and opens a kernel on it, or takes
// one whose kernel the pool opened ahead (premade), for owner. A session's
// creation and the replacement of its dead kernel both come here, so both
// wait in the pool's queue and count against its limits alike. On failure
// the returned lease, if any, still holds the sandbox for the caller to
// release.
func (m *Manager) open(ctx context.Context, owner, template string, env map[string]string, limits runner.Limits, network string) (*lease, error) {
	opts := pool.RunOptions{Limits: limits, Tenant: owner, Network: network != ""}
	if network == "" {
		if l, ok, err := m.premade(template, env, opts); err != nil || ok {
			return l, err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(m.ctx, cancel) // Close interrupts the waits
	defer stop()

	pl, err := m.pool.AcquireWith(ctx, template, opts)
	switch {
	case errors.Is(err, pool.ErrUnknownTemplate):
		return nil, invalidf("unknown template %q", template)
	case err != nil && m.ctx.Err() != nil:
		return nil, ErrClosed
	case err != nil:
		return nil, err
	}
	l := &lease{sb: pl.Sandbox, start: pl.Kind, opening: OpenTiming{Acquire: pl.Wait, Start: pl.Start}}
	if err := m.serveNetwork(l, network); err != nil {
		return l, err
	}
	opener, ok := pl.Sandbox.(runner.KernelOpener)
	if !ok {
		return l, fmt.Errorf("on %s sandbox: %w", template, runner.ErrNotSupported)
	}
	began := time.Now()
	l.k, err = opener.OpenKernel(ctx, runner.KernelOptions{Env: env})
	l.opening.Kernel = time.Since(began)
	if err != nil {
		if m.ctx.Err() != nil {
			err = ErrClosed
		}
		return l, fmt.Errorf("opening kernel in sandbox %s: %w", pl.Sandbox.ID(), err)
	}
	return l, nil
}

// premade takes a sandbox whose kernel the pool opened before it was
// asked for, when the kernel needs nothing it must know as it opens: a
// session with an environment, or limits other than the template's,
// opens its kernel itself. ok is false when none was taken.
func (m *Manager) premade(template string, env map[string]string, opts pool.RunOptions) (*lease, bool, error) {
	if len(env) > 0 {
		return nil, false, nil
	}
	kl, ok, err := m.pool.AcquireKernel(template, opts)
	switch {
	case errors.Is(err, pool.ErrUnknownTemplate):
		return nil, false, invalidf("unknown template %q", template)
	case err != nil && m.ctx.Err() != nil:
		return nil, false, ErrClosed
	case err != nil:
		return nil, false, err
	case !ok:
		return nil, false, nil
	}
	return &lease{sb: kl.Sandbox, k: kl.Kernel, start: kl.Kind}, true, nil
}

func (m *Manager) newSession(owner string, o CreateOptions, ttl time.Duration, l *lease) *session {
	now := m.cfg.Now()
	return &session{
		id:            m.newID(),
		owner:         owner,
		template:      o.Template,
		env:           o.Env,
		limits:        o.Limits,
		network:       o.Network,
		cur:           l,
		created:       now,
		ttl:           ttl,
		sleepAtExpiry: o.HibernateAtExpiry,
		ended:         make(chan struct{}),
		lastUsed:      now,
	}
}

// newID returns 128 random bits in hex.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics instead)
	return hex.EncodeToString(b[:])
}
