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
	StartWake    StartKind = "wake"    // woken from a hibernated session's own image (Wake)
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
	// Queued is the part of Wait spent in the admission queue.
	Queued time.Duration
}

// Warm reports whether the sandbox came ready from the pool.
func (l Lease) Warm() bool { return l.Kind == StartPool }

// QueueDeadline is how long a request may wait for a sandbox, from when
// it began to wait.
func (m *Manager) QueueDeadline() time.Duration { return m.cfg.QueueDeadline }

// Acquire returns a never-used sandbox of the named template: a ready one
// when there is one (a hit), else one started now (a miss) once a start
// slot is free. It waits in the admission queue (see admit.go) as the
// tenant "" no longer than ctx and QueueDeadline allow.
func (m *Manager) Acquire(ctx context.Context, template string) (Lease, error) {
	return m.AcquireWith(ctx, template, RunOptions{})
}

// lease waits in the admission queue for a ready sandbox of tp or a start
// slot (and a run slot when run is set), and in the second case starts a
// sandbox of spec (custom: other limits than the template's), or wakes
// one from the image in wake when it is set (a ready sandbox never serves
// then). The queue deadline counts from since when it is set, else from
// now.
func (m *Manager) lease(ctx context.Context, tp *tpool, spec runner.Spec, custom bool, tenant string, run bool, since time.Time, wake string) (Lease, error) {
	custom = custom || wake != ""
	begin := time.Now()
	if err := ctx.Err(); err != nil {
		return Lease{}, fmt.Errorf("acquiring %s sandbox: %w", tp.tmpl.Name, err)
	}
	if since.IsZero() || since.After(begin) {
		since = begin
	}
	sb, err := m.admit(ctx, &ticket{tenant: tenant, tp: tp, custom: custom, run: run}, since.Add(m.cfg.QueueDeadline))
	if err != nil {
		return Lease{}, err
	}
	queued := time.Since(begin)
	if sb != nil {
		return Lease{Sandbox: sb, Kind: StartPool, Wait: queued, Queued: queued}, nil
	}
	defer m.endStart(false)
	startBegin := time.Now()
	var kind StartKind
	if custom {
		sb, kind, err = m.startCustom(ctx, tp, spec, wake)
	} else {
		sb, kind, err = m.coldStart(ctx, tp)
	}
	if err != nil {
		if run {
			m.endRun()
		}
		return Lease{}, err
	}
	return Lease{Sandbox: sb, Kind: kind, Wait: time.Since(begin), Queued: queued, Start: time.Since(startBegin)}, nil
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
