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
	// before the session declares it unresponsive and lost.
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
}

// Execute runs one cell in the owner's session id. events, when non-nil,
// receives the cell's output events in order before Execute returns. A
// cell that fails is a result (Status "error"). If ctx ends while the cell
// runs, the cell is interrupted and Execute returns once the kernel has
// ended it, with ctx's error. A kernel that dies (or reports oom or
// kernel_lost) leaves the session lost: this call returns its result, or
// ErrSessionLost when there is none, and every later call ErrSessionLost.
func (m *Manager) Execute(ctx context.Context, owner, id string, o ExecuteOptions, events func(runner.Event)) (Execution, error) {
	timeout, err := m.checkTimeout(o.Timeout)
	if err != nil {
		return Execution{}, err
	}
	s, err := m.pin(owner, id)
	if err != nil {
		return Execution{}, err
	}
	defer m.unpin(s)
	x := Execution{Template: s.template, Start: s.start}
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

	req := runner.ExecuteRequest{Code: o.Code, Timeout: timeout, Env: o.Env, MaxOutput: m.cfg.MaxOutput, Input: o.Input}
	// While the cell runs, sandbox starts yield to it (pool.CellBegin).
	cellEnd := m.pool.CellBegin()
	x.ExecuteResult, err = m.run(ctx, s, req, events)
	cellEnd()
	if err != nil {
		return x, err
	}
	m.mu.Lock()
	s.count = x.ExecutionCount
	m.mu.Unlock()
	if x.Reason == runner.ReasonKernelLost || x.Reason == runner.ReasonOOM {
		m.markLost(s, "cell ended with "+string(x.Reason))
	}
	if err := ctx.Err(); err != nil {
		return x, fmt.Errorf("executing in session %s: %w", s.id, err)
	}
	return x, nil
}

// run executes req on s's kernel. The kernel keeps the cell until it has
// really ended, so that the next turn finds it idle: the caller's ctx only
// interrupts it. A kernel that has not ended the cell execSlack after its
// timeout is declared lost and abandoned.
func (m *Manager) run(ctx context.Context, s *session, req runner.ExecuteRequest, events func(runner.Event)) (runner.ExecuteResult, error) {
	kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), req.Timeout+m.execSlack)
	defer cancel()
	interrupted := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(interrupted)
		m.interruptDetached(ctx, s)
	})
	defer func() {
		if !stop() {
			<-interrupted // never let it reach the next turn's cell
		}
	}()

	g := &gate{fn: events}
	done := make(chan outcome, 1)
	go func() {
		res, err := s.k.Execute(kctx, req, g.send)
		done <- outcome{res, err}
	}()
	select {
	case o := <-done:
		if o.err != nil {
			return o.res, m.executeErr(ctx, s, o.err)
		}
		return o.res, nil
	case <-kctx.Done():
		g.close()
		err := fmt.Errorf("executing in session %s: kernel unresponsive: %w", s.id, ErrSessionLost)
		if m.isClosed(s) {
			err = fmt.Errorf("session %s closed while executing: %w", s.id, ErrSessionNotFound)
		}
		m.markLost(s, "kernel did not end a cell after its timeout")
		return runner.ExecuteResult{}, err
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

// executeErr classifies an error from Kernel.Execute.
func (m *Manager) executeErr(ctx context.Context, s *session, err error) error {
	switch {
	case m.isClosed(s):
		return fmt.Errorf("session %s closed while executing: %w", s.id, ErrSessionNotFound)
	case errors.Is(err, runner.ErrKernelLost):
		m.markLost(s, "kernel died during a cell")
		return fmt.Errorf("executing in session %s: %w", s.id, ErrSessionLost)
	case ctx.Err() != nil:
		return fmt.Errorf("executing in session %s: %w", s.id, ctx.Err())
	}
	return fmt.Errorf("executing in session %s: %w", s.id, err)
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
func (m *Manager) interruptDetached(ctx context.Context, s *session) {
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), interruptTimeout)
	defer cancel()
	m.log.Info("caller went away; interrupting the cell", keySessionID, s.id)
	if err := s.k.Interrupt(ictx); err != nil && !errors.Is(err, runner.ErrKernelLost) {
		m.log.Warn("interrupting an abandoned cell failed", keySessionID, s.id, "error", err)
	}
}
