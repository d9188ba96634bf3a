package kernels

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/paddock-dev/paddock/policy"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
)

const (
	// defaultExecuteSlack is how long past its own timeout a kernel may
	// take to end a cell (it interrupts, then kills after a grace period)
	// before the session abandons it as dead and replaces it.
	defaultExecuteSlack = 10 * time.Second
	// interruptTimeout bounds an Interrupt sent on a caller's behalf
	// after the caller went away.
	interruptTimeout = 5 * time.Second
)

// ExecuteOptions describe one cell.
type ExecuteOptions struct {
	Code string
	// Timeout is the cell's wall-time limit; zero means
	// Config.DefaultTimeout, at most Config.MaxTimeout.
	Timeout time.Duration
	// Env is set in the interpreter's environment before the cell runs.
	Env map[string]string
	// Queue makes a call that finds the session busy wait its turn
	// (behind at most MaxQueue others) instead of failing with ErrBusy.
	Queue bool
	// Input answers the cell's reads of standard input; nil means the cell
	// may not read any (see runner.ExecuteRequest.Input).
	Input runner.InputFunc
}

// Execution is the result of one cell, with how long it waited for the
// session's turn and how the session's sandbox was made.
type Execution struct {
	runner.ExecuteResult
	// Queue is the time spent waiting for the session's turn.
	Queue time.Duration
	// Template and Start describe the session's sandbox: an execute never
	// makes one, so Start is how the session's own sandbox was made.
	Template string
	Start    pool.StartKind
	// StateLost says the session's state is gone: its kernel died, or was
	// killed, during this cell or between the last cell and this one (then
	// this cell ran on a fresh kernel). LostReason says how, and, when no
	// fresh kernel could be had, why, in words fit for the client.
	StateLost  bool
	LostReason string
	// Restarted says the session goes on with a fresh kernel of its
	// template (execution count from zero, no variables, an empty working
	// directory); false with StateLost means the session is lost.
	Restarted bool
	// Wake says whether the session had to be woken from hibernation for
	// this cell, and how long that took: after its turn came, before the
	// cell ran.
	Wake Wake
}

// Execute runs one cell in the owner's session id. events, when non-nil,
// receives the cell's output events in order before Execute returns. A
// cell that fails is a result (Status "error"). If ctx ends while the cell
// runs, the cell is interrupted and Execute returns once the kernel has
// ended it, with ctx's error. A kernel that dies with the cell (it ran out
// of memory or crashed, or it was killed because the cell did not stop
// when interrupted at its timeout) is replaced by a fresh one before
// Execute returns, and the result says so (StateLost, Restarted); only
// when none can be had is the session lost, and every later call
// ErrSessionLost.
func (m *Manager) Execute(ctx context.Context, owner, id string, o ExecuteOptions, events func(runner.Event)) (Execution, error) {
	timeout, err := m.checkTimeout(o.Timeout)
	if err != nil {
		return Execution{}, err
	}
	s, l, err := m.pin(owner, id)
	if err != nil {
		return Execution{}, err
	}
	defer m.unpin(s)
	x := Execution{Template: s.template, Start: l.start}
	mode := turnNow
	if o.Queue {
		mode = turnQueue
	}
	waitStart := time.Now()
	if err := m.acquireTurn(ctx, s, mode, nil); err != nil {
		return x, err
	}
	defer m.releaseTurn(s)
	x.Queue = time.Since(waitStart)
	if err := ctx.Err(); err != nil {
		return x, fmt.Errorf("executing in session %s: %w", s.id, err)
	}
	if l, x.Wake, err = m.awake(ctx, s); err != nil {
		return x, err
	}
	if l, err = m.fresh(s); err != nil {
		return x, err
	}
	x.Start = l.start
	m.mu.Lock()
	x.LostReason, s.diedIdle, s.idleDeaths = s.diedIdle, "", 0
	x.StateLost, x.Restarted = x.LostReason != "", x.LostReason != ""
	m.mu.Unlock()

	req := runner.ExecuteRequest{Code: o.Code, Timeout: timeout, Env: o.Env, MaxOutput: m.cfg.MaxOutput, Input: o.Input}
	// While the cell runs, sandbox starts yield to it (pool.CellBegin).
	cellEnd := m.pool.CellBegin(s.id)
	res, died, err := m.run(ctx, s, l, req, events)
	cellEnd()
	x.ExecuteResult = res
	if died == "" {
		if err != nil {
			return x, err
		}
		m.mu.Lock()
		s.count = x.ExecutionCount
		m.mu.Unlock()
	} else {
		m.restartAfter(s, l, died, &x)
	}
	if err := ctx.Err(); err != nil {
		return x, fmt.Errorf("executing in session %s: %w", s.id, err)
	}
	return x, nil
}

// fresh returns s's kernel for the turn's holder, replacing it first if it
// died since the last cell (its watcher has not got to it yet).
func (m *Manager) fresh(s *session) (*lease, error) {
	l := m.current(s)
	if !isLost(l.k) {
		return l, nil
	}
	why := "the kernel died between cells"
	if err := m.replace(s, l, why); err != nil {
		m.mu.Lock()
		defer m.mu.Unlock()
		if s.lost {
			return nil, lostErr(s)
		}
		return nil, err
	}
	m.mu.Lock()
	s.diedIdle = why
	m.mu.Unlock()
	return m.current(s), nil
}

// restartAfter replaces l, the kernel that died with the cell x (died says
// how), and records in x that the state is gone and whether the session
// goes on.
func (m *Manager) restartAfter(s *session, l *lease, died string, x *Execution) {
	if x.Status == "" { // the kernel died before it could say how the cell ended
		x.Status, x.Reason = runner.StatusAborted, runner.ReasonKernelLost
	}
	x.Lost, x.StateLost, x.LostReason, x.Restarted = true, true, died, false
	if err := m.replace(s, l, died); err != nil {
		m.mu.Lock()
		if s.lost {
			x.LostReason = s.lostWhy
		}
		m.mu.Unlock()
		return
	}
	x.Restarted = true
}

// run executes req on l, s's kernel. The kernel keeps the cell until it
// has really ended, so that the next turn finds it idle: the caller's ctx
// only interrupts it. died says how the kernel died with the cell, if it
// did: a kernel that has not ended the cell execSlack after its timeout
// is abandoned as dead.
func (m *Manager) run(ctx context.Context, s *session, l *lease, req runner.ExecuteRequest, events func(runner.Event)) (res runner.ExecuteResult, died string, err error) {
	kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), req.Timeout+m.execSlack)
	defer cancel()
	interrupted := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(interrupted)
		m.interruptDetached(ctx, s, l)
	})
	defer func() {
		if !stop() {
			<-interrupted // never let it reach the next turn's cell
		}
	}()

	g := &gate{fn: events}
	begin := time.Now()
	done := make(chan outcome, 1)
	go func() {
		res, err := l.k.Execute(kctx, req, g.send)
		done <- outcome{res, err}
	}()
	select {
	case o := <-done:
		switch {
		case m.isClosed(s):
			return o.res, "", fmt.Errorf("session %s closed while executing: %w", s.id, ErrSessionNotFound)
		case o.err != nil && errors.Is(o.err, runner.ErrKernelLost):
			return o.res, "the kernel died during the cell", nil
		case o.err != nil && ctx.Err() != nil:
			return o.res, "", fmt.Errorf("executing in session %s: %w", s.id, ctx.Err())
		case o.err != nil:
			return o.res, "", fmt.Errorf("executing in session %s: %w", s.id, o.err)
		}
		return o.res, deathOf(o.res), nil
	case <-kctx.Done():
		g.close()
		if m.isClosed(s) {
			return runner.ExecuteResult{}, "", fmt.Errorf("session %s closed while executing: %w", s.id, ErrSessionNotFound)
		}
		res := runner.ExecuteResult{Status: runner.StatusAborted, Reason: runner.ReasonTimeout, Exec: time.Since(begin)}
		return res, fmt.Sprintf("the kernel did not end the cell within %s of its timeout, so its sandbox was abandoned", m.execSlack), nil
	}
}

type outcome struct {
	res runner.ExecuteResult
	err error
}

// gate forwards events to fn until closed; once close returns, fn is
// never called again.
type gate struct {
	fn     func(runner.Event)
	mu     sync.Mutex
	closed bool
}

func (g *gate) send(e runner.Event) {
	if g.fn == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.closed {
		g.fn(e)
	}
}

func (g *gate) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

func (m *Manager) isClosed(s *session) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return s.closed
}

func (m *Manager) checkTimeout(d time.Duration) (time.Duration, error) {
	if err := policy.OptionalDuration("timeout", d, time.Millisecond, m.cfg.MaxTimeout, m.cfg.DefaultTimeout); err != nil {
		return 0, invalid(err)
	}
	if d == 0 {
		return m.cfg.DefaultTimeout, nil
	}
	return d, nil
}

// interruptDetached interrupts s's cell for a caller whose ctx ended, on
// a context of its own.
func (m *Manager) interruptDetached(ctx context.Context, s *session, l *lease) {
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), interruptTimeout)
	defer cancel()
	m.log.Info("caller went away; interrupting the cell", keySessionID, s.id)
	if err := l.k.Interrupt(ictx); err != nil && !errors.Is(err, runner.ErrKernelLost) {
		m.log.Warn("interrupting an abandoned cell failed", keySessionID, s.id, "error", err)
	}
}
