package core

import (
	"context"
	"fmt"
	"time"

	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/policy"
	"github.com/paddock-dev/paddock/store"
)

// SessionInput is a session to create.
type SessionInput struct {
	// Language picks the template: its session template (see
	// Service.Template). Required unless Template is given.
	Language string
	// Template names the template in place of the language's; it must be
	// of Language when both are given.
	Template string
	// TTL is the idle time after which the session ends: 0 is the
	// kernels' default, at most their MaxTTL (whole seconds; a fraction
	// counts as a second).
	TTL time.Duration
	// Env is set in the interpreter's environment for the whole session.
	Env map[string]string
	// Limits replace the template's resource limits field by field.
	Limits Limits
	// HibernateAtExpiry hibernates the session when its TTL runs out,
	// rather than ending it (E2B's pause on timeout); it then ends at its
	// maximum lifetime unless a call or ResumeSession wakes it. It needs
	// hibernation on (hibernation_off otherwise).
	HibernateAtExpiry bool
	// Network asks for a network for the session's sandboxes
	// (session_network.go); nil: none.
	Network *NetworkAsk
}

// Session describes a session to its owner.
type Session struct {
	kernels.Info
	// Language is the language of the session's template, Runtime the
	// runtime that isolates its sandbox.
	Language string
	Runtime  string
	// Network is the egress policy the session's sandboxes get; nil
	// without a network.
	Network *NetworkPolicy
}

// sessionsFor checks that sessions are on and the caller may use them.
func (s *Service) sessionsFor(c Caller) error {
	if err := s.Authorize(c, ScopeSessions); err != nil {
		return err
	}
	if s.kernels == nil {
		return Classify(ErrSessionsDisabled)
	}
	return nil
}

func (s *Service) session(info kernels.Info) Session {
	return Session{Info: info, Language: s.langOf[info.Template], Runtime: s.runtimeOf[info.Template],
		Network: sessionNetwork(info.Network)}
}

// CreateSession opens a session owned by the caller's tenant. It checks
// the "sessions" scope, the ranges and the tenant's session limit.
func (s *Service) CreateSession(ctx context.Context, c Caller, in SessionInput) (_ Session, err error) {
	defer func() { s.metrics.done(c.Door, "create_session", err) }()
	if err := s.sessionsFor(c); err != nil {
		return Session{}, err
	}
	opts, err := s.createOptions(c, in)
	if err != nil {
		return Session{}, err
	}
	live := func() int { return len(s.kernels.List(c.Tenant)) }
	done, err := s.tenants.startCreate(c.Tenant, live, s.kernels.Config().ReapInterval)
	if err != nil {
		return Session{}, s.fail(err)
	}
	defer done()
	info, err := s.kernels.Create(ctx, c.Tenant, opts)
	if err != nil {
		return Session{}, s.fail(err)
	}
	s.history.prune(s.kernels)
	s.recordSession(c, info.ID, info.Template, store.EventCreated, "")
	return s.session(info), nil
}

// createOptions checks in against the kernels' limits: language, TTL,
// limits (the same range as a run's), env.
func (s *Service) createOptions(c Caller, in SessionInput) (kernels.CreateOptions, error) {
	var out kernels.CreateOptions
	tgt, err := s.resolve(in.Language, in.Template, false, "")
	if err != nil {
		return out, err
	}
	out.Template = tgt.template
	if out.TTL, err = s.checkTTL(in.TTL); err != nil {
		return out, err
	}
	if out.Limits, err = s.runnerLimits(in.Limits); err != nil {
		return out, err
	}
	if out.Env, err = checkEnv(in.Env); err != nil {
		return out, err
	}
	out.HibernateAtExpiry = in.HibernateAtExpiry
	var pol *NetworkPolicy
	if out.Network, pol, err = s.planSessionNetwork(s.allowanceFor(c, tgt.template), in.Network); err != nil {
		return out, err
	}
	if pol != nil {
		out.Env = withProxy(out.Env)
	}
	return out, nil
}

// checkTTL checks a session TTL in whole seconds (ttl_s) against the
// kernels' maximum; 0 stays 0, the default.
func (s *Service) checkTTL(ttl time.Duration) (time.Duration, error) {
	cfg := s.kernels.Config()
	secs := seconds(ttl)
	if err := policy.Optional("ttl_s", secs, int64(cfg.MaxTTL/time.Second), int64(cfg.DefaultTTL/time.Second)); err != nil {
		return 0, outOfRange(err)
	}
	return time.Duration(secs) * time.Second, nil
}

// Session describes the caller's session id. A lost one is still shown
// (State "lost"); another tenant's is KindNotFound.
func (s *Service) Session(c Caller, id string) (Session, error) {
	if err := s.sessionsFor(c); err != nil {
		return Session{}, err
	}
	info, err := s.kernels.Get(c.Tenant, id)
	if err != nil {
		return Session{}, s.fail(err)
	}
	return s.session(info), nil
}

// Sessions describes the caller's sessions, oldest first. It is empty
// when the caller may not use sessions or they are off.
func (s *Service) Sessions(c Caller) []Session {
	if s.sessionsFor(c) != nil {
		return []Session{}
	}
	return s.sessions(s.kernels.List(c.Tenant))
}

// AllSessions describes every tenant's sessions, oldest first (Owner
// says whose): for operators, with the "admin" scope.
func (s *Service) AllSessions(c Caller) ([]Session, error) {
	if err := s.Authorize(c, ScopeAdmin); err != nil {
		return nil, err
	}
	s.recordAdmin(c, "list_all_sessions", "", "")
	if s.kernels == nil {
		return nil, Classify(ErrSessionsDisabled)
	}
	return s.sessions(s.kernels.ListAll()), nil
}

func (s *Service) sessions(infos []kernels.Info) []Session {
	out := make([]Session, 0, len(infos))
	for _, info := range infos {
		out = append(out, s.session(info))
	}
	return out
}

// CloseSession closes the caller's session id and releases its sandbox;
// an execution in flight ends as the kernel goes away.
func (s *Service) CloseSession(ctx context.Context, c Caller, id string) (err error) {
	defer func() { s.metrics.done(c.Door, "close_session", err) }()
	if err := s.sessionsFor(c); err != nil {
		return err
	}
	var template string // for the history's event, read before the session goes
	if s.HistoryEnabled() {
		info, _ := s.kernels.Get(c.Tenant, id)
		template = info.Template
	}
	if err := s.kernels.Delete(ctx, c.Tenant, id); err != nil {
		return s.fail(err)
	}
	s.history.drop(id)
	s.recordSession(c, id, template, store.EventDeleted, "")
	return nil
}

// SetSessionTTL gives the caller's session id a new idle TTL counted from
// now (0: the default; at most the kernels' MaxTTL), as E2B's set
// timeout does. The session still ends at its maximum lifetime.
func (s *Service) SetSessionTTL(c Caller, id string, ttl time.Duration) (_ Session, err error) {
	defer func() { s.metrics.done(c.Door, "set_session_ttl", err) }()
	if err := s.sessionsFor(c); err != nil {
		return Session{}, err
	}
	if ttl, err = s.checkTTL(ttl); err != nil {
		return Session{}, err
	}
	if ttl == 0 {
		ttl = s.kernels.Config().DefaultTTL
	}
	info, err := s.kernels.SetTTL(c.Tenant, id, ttl)
	if err != nil {
		return Session{}, s.fail(err)
	}
	return s.session(info), nil
}

// Interrupt stops the cell running in the caller's session id, if any.
func (s *Service) Interrupt(ctx context.Context, c Caller, id string) (err error) {
	defer func() { s.metrics.done(c.Door, "interrupt", err) }()
	if err := s.sessionsFor(c); err != nil {
		return err
	}
	return s.fail(s.kernels.Interrupt(ctx, c.Tenant, id))
}

// Restart gives the caller's session id a fresh interpreter, keeping its
// id, sandbox and files.
func (s *Service) Restart(ctx context.Context, c Caller, id string) (_ Session, err error) {
	defer func() { s.metrics.done(c.Door, "restart", err) }()
	if err := s.sessionsFor(c); err != nil {
		return Session{}, err
	}
	info, err := s.kernels.Restart(ctx, c.Tenant, id)
	if err != nil {
		return Session{}, s.fail(err)
	}
	s.recordSession(c, id, info.Template, store.EventRestarted, "")
	return s.session(info), nil
}

// PauseSession hibernates the caller's session id: its state is saved to
// disk and its sandbox freed, until a call needs it again or ResumeSession.
func (s *Service) PauseSession(ctx context.Context, c Caller, id string) (_ Session, err error) {
	defer func() { s.metrics.done(c.Door, "pause_session", err) }()
	if err := s.sessionsFor(c); err != nil {
		return Session{}, err
	}
	info, err := s.kernels.Pause(ctx, c.Tenant, id)
	if err != nil {
		return Session{}, s.fail(err)
	}
	s.recordSession(c, id, info.Template, store.EventPaused, "")
	return s.session(info), nil
}

// ResumeSession wakes the caller's session id if it is hibernated, and
// says whether it was and how long waking took.
func (s *Service) ResumeSession(ctx context.Context, c Caller, id string) (_ Session, _ Wake, err error) {
	defer func() { s.metrics.done(c.Door, "resume_session", err) }()
	if err := s.sessionsFor(c); err != nil {
		return Session{}, Wake{}, err
	}
	info, w, err := s.kernels.Resume(ctx, c.Tenant, id)
	if err != nil {
		return Session{}, w, s.fail(err)
	}
	if w.Resumed {
		s.recordSession(c, id, info.Template, store.EventResumed, "")
	}
	return s.session(info), w, nil
}

// ForkSession gives the caller count new sessions that start from the
// exact state of its session id, each reseeded; each counts against the
// tenant's session limit as a creation does.
func (s *Service) ForkSession(ctx context.Context, c Caller, id string, count int) (_ []Session, err error) {
	defer func() { s.metrics.done(c.Door, "fork_session", err) }()
	if err := s.sessionsFor(c); err != nil {
		return nil, err
	}
	if count < 1 || count > kernels.MaxFork {
		return nil, s.fail(fmt.Errorf("%w: count must be between 1 and %d; got %d", kernels.ErrInvalid, kernels.MaxFork, count))
	}
	live := func() int { return len(s.kernels.List(c.Tenant)) }
	for range count {
		done, err := s.tenants.startCreate(c.Tenant, live, s.kernels.Config().ReapInterval)
		if err != nil {
			return nil, s.fail(err)
		}
		defer done()
	}
	infos, err := s.kernels.Fork(ctx, c.Tenant, id, count)
	if err != nil {
		return nil, s.fail(err)
	}
	out := make([]Session, len(infos))
	for i, info := range infos {
		s.recordSession(c, info.ID, info.Template, store.EventCreated, "fork of "+id)
		out[i] = s.session(info)
	}
	return out, nil
}

// SaveCheckpoint saves the caller's session id under name, to rewind it
// to later.
func (s *Service) SaveCheckpoint(ctx context.Context, c Caller, id, name string) (_ kernels.Checkpoint, err error) {
	defer func() { s.metrics.done(c.Door, "save_checkpoint", err) }()
	if err := s.sessionsFor(c); err != nil {
		return kernels.Checkpoint{}, err
	}
	cp, err := s.kernels.SaveCheckpoint(ctx, c.Tenant, id, name)
	return cp, s.fail(err)
}

// Checkpoints lists the caller's session id's checkpoints.
func (s *Service) Checkpoints(c Caller, id string) ([]kernels.Checkpoint, error) {
	if err := s.sessionsFor(c); err != nil {
		return nil, err
	}
	cps, err := s.kernels.Checkpoints(c.Tenant, id)
	return cps, s.fail(err)
}

// Rewind brings the caller's session id back to its checkpoint name.
func (s *Service) Rewind(ctx context.Context, c Caller, id, name string) (_ Session, err error) {
	defer func() { s.metrics.done(c.Door, "rewind", err) }()
	if err := s.sessionsFor(c); err != nil {
		return Session{}, err
	}
	info, err := s.kernels.Rewind(ctx, c.Tenant, id, name)
	if err != nil {
		return Session{}, s.fail(err)
	}
	s.recordSession(c, id, info.Template, store.EventRewound, name)
	return s.session(info), nil
}
