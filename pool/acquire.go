package pool

import (
	"context"
	"fmt"
	"time"

	"github.com/paddock-dev/paddock/runner"
)

// StartKind says where a leased sandbox came from.
type StartKind string

const (
	StartPool    StartKind = "pool"    // taken ready from the pool
	StartRestore StartKind = "restore" // restored from the template's snapshot on the request path
	StartCold    StartKind = "cold"    // started from scratch on the request path
)

// Lease is a sandbox handed out by Acquire. Its holder must Release it.
type Lease struct {
	Sandbox runner.Sandbox
	Kind    StartKind
	// Start is the part of Wait spent restoring or starting the sandbox
	// on the request path; zero for a pool hit.
	Start time.Duration
	// Wait is how long Acquire took.
	Wait time.Duration
}

// Warm reports whether the sandbox came ready from the pool.
func (l Lease) Warm() bool { return l.Kind == StartPool }

// Acquire returns a never-used sandbox of the named template: a ready one
// when there is one (a hit), else one started now (a miss) once one of
// MaxColdStarts slots is free. It waits no longer than ctx allows.
func (m *Manager) Acquire(ctx context.Context, template string) (Lease, error) {
	begin := time.Now()
	tp, ok := m.pools[template]
	if !ok {
		return Lease{}, fmt.Errorf("acquiring %q: %w", template, ErrUnknownTemplate)
	}
	if err := ctx.Err(); err != nil {
		return Lease{}, fmt.Errorf("acquiring %s sandbox: %w", template, err)
	}
	if sb, ok, err := m.takeReady(tp); err != nil {
		return Lease{}, err
	} else if ok {
		return Lease{Sandbox: sb, Kind: StartPool, Wait: time.Since(begin)}, nil
	}

	if err := m.takeColdSlot(ctx); err != nil {
		return Lease{}, err
	}
	defer func() { <-m.coldSlots }()

	// A filler may have readied one while this call waited for the slot.
	if sb, ok, err := m.takeReady(tp); err != nil {
		return Lease{}, err
	} else if ok {
		return Lease{Sandbox: sb, Kind: StartPool, Wait: time.Since(begin)}, nil
	}
	startBegin := time.Now()
	sb, kind, err := m.coldStart(ctx, tp)
	if err != nil {
		return Lease{}, err
	}
	return Lease{Sandbox: sb, Kind: kind, Wait: time.Since(begin), Start: time.Since(startBegin)}, nil
}

// takeColdSlot waits for one of MaxColdStarts slots, as long as ctx
// allows; the caller gives it back.
func (m *Manager) takeColdSlot(ctx context.Context) error {
	select {
	case m.coldSlots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for a cold start slot: %w", ctx.Err())
	case <-m.ctx.Done():
		return fmt.Errorf("waiting for a cold start slot: %w", ErrClosed)
	}
}

// takeReady leases the oldest live ready sandbox of tp, destroying dead
// ones it meets. ok is false when none is ready.
func (m *Manager) takeReady(tp *tpool) (sb runner.Sandbox, ok bool, err error) {
	var dead []runner.Sandbox
	m.mu.Lock()
	closed := m.closed
	for !closed && len(tp.ready) > 0 {
		e := tp.ready[0]
		tp.ready[0] = nil
		tp.ready = tp.ready[1:]
		close(e.taken)
		if isDone(e.sb) {
			dead = append(dead, e.sb)
			continue
		}
		tp.inUse++
		tp.hits++
		m.recordTakeLocked(tp, false)
		m.leases[e.sb.ID()] = tp
		sb, ok = e.sb, true
		break
	}
	m.mu.Unlock()

	for _, d := range dead {
		m.log.Warn("ready sandbox was dead; skipping it", keyTemplate, tp.tmpl.Name, keySandboxID, d.ID())
		m.destroy(d)
	}
	if closed {
		return nil, false, fmt.Errorf("acquiring %s sandbox: %w", tp.tmpl.Name, ErrClosed)
	}
	tp.poke()
	return sb, ok, nil
}

// coldStart starts a sandbox on the request path and leases it. Close
// cancels it.
func (m *Manager) coldStart(ctx context.Context, tp *tpool) (runner.Sandbox, StartKind, error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, "", fmt.Errorf("acquiring %s sandbox: %w", tp.tmpl.Name, ErrClosed)
	}
	tp.starting++
	tp.misses++
	m.recordTakeLocked(tp, true)
	m.holdLocked()
	m.mu.Unlock()
	tp.poke() // the target may have grown

	sctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(m.ctx, cancel)
	sb, kind, err := m.make(sctx, tp, true)
	stop()
	cancel()

	m.mu.Lock()
	defer m.mu.Unlock()
	tp.starting--
	if err != nil {
		m.unholdLocked()
		switch {
		case ctx.Err() != nil:
			return nil, "", fmt.Errorf("starting on demand: %w", ctx.Err())
		case m.closed:
			return nil, "", fmt.Errorf("starting on demand: %w", ErrClosed)
		}
		tp.failures++
		return nil, "", fmt.Errorf("starting on demand: %w", err)
	}
	tp.healthy = true
	if m.closed {
		m.destroy(sb)
		return nil, "", fmt.Errorf("starting on demand: %w", ErrClosed)
	}
	tp.inUse++
	m.leases[sb.ID()] = tp
	return sb, kind, nil
}

// Release destroys sb off the request path and lets the filler replace
// it. Every leased sandbox must be released exactly once; a sandbox the
// manager does not know is destroyed all the same.
func (m *Manager) Release(sb runner.Sandbox) {
	if sb == nil {
		return
	}
	m.mu.Lock()
	tp, ok := m.leases[sb.ID()]
	if ok {
		delete(m.leases, sb.ID())
		tp.inUse--
		m.releaseCustomLocked(tp, sb.ID())
	} else {
		m.holdLocked()
	}
	m.mu.Unlock()

	if !ok {
		m.log.Warn("releasing a sandbox this pool did not lease", keySandboxID, sb.ID())
	}
	m.destroy(sb)
	if ok {
		tp.poke()
	}
}
