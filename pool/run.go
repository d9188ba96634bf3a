package pool

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/paddock-dev/paddock/runner"
)

// Timing splits a one-shot run's wall time into its phases.
type Timing struct {
	Queue   time.Duration // waiting in the admission queue for a run slot and a sandbox or a start slot
	Acquire time.Duration // getting the sandbox once admitted, Start included
	Start   time.Duration // restoring or starting one on the request path; zero on a pool hit
	Exec    time.Duration // Sandbox.Run
	Total   time.Duration
}

// Outcome is what a one-shot run produced and how it went.
type Outcome struct {
	Result    runner.RunResult
	Kind      StartKind
	SandboxID string
	Timing    Timing
}

// Run executes req once on a fresh sandbox of the named template: it waits
// in the admission queue for a run slot and a sandbox (at most
// QueueDeadline, then ErrSaturated), acquires the sandbox,
// runs req and releases the sandbox whatever happens. If ctx ends during
// the run the sandbox is destroyed at once. A sandbox that was lost before
// it took the request is replaced once.
func (m *Manager) Run(ctx context.Context, template string, req runner.RunRequest, out runner.OutputFunc) (Outcome, error) {
	return m.RunWith(ctx, template, RunOptions{}, req, out)
}

// RunWith is Run with opts. A run whose opts.Limits differ from the
// template's always gets a sandbox started for it (see RunOptions), under
// the same run and start slots.
func (m *Manager) RunWith(ctx context.Context, template string, opts RunOptions, req runner.RunRequest, out runner.OutputFunc) (Outcome, error) {
	begin := time.Now()
	var o Outcome
	if !opts.Since.IsZero() && opts.Since.Before(begin) {
		o.Timing.Queue = begin.Sub(opts.Since) // waited before the pool
		begin = opts.Since
	}
	tp, ok := m.pools[template]
	if !ok {
		return o, fmt.Errorf("running on %q: %w", template, ErrUnknownTemplate)
	}
	if err := m.available(tp); err != nil {
		return o, err
	}
	spec, custom := tp.specFor(opts)
	for attempt := 1; ; attempt++ {
		// The first lease takes the run slot, held until the run ends.
		since := time.Time{}
		if attempt == 1 {
			since = opts.Since
		}
		lease, err := m.lease(ctx, tp, spec, custom, opts.Tenant, attempt == 1, since, "")
		if attempt == 1 && err == nil {
			defer m.endRun()
		}
		o.Timing.Queue += lease.Queued
		o.Timing.Acquire += lease.Wait - lease.Queued
		o.Timing.Start += lease.Start
		if err != nil {
			o.Timing.Total = time.Since(begin)
			return o, err
		}
		o.Kind, o.SandboxID = lease.Kind, lease.Sandbox.ID()

		o.Result, err = m.runLeased(ctx, lease.Sandbox, opts, req, out, &o.Timing.Exec)
		o.Timing.Total = time.Since(begin)
		if err != nil && attempt == 1 && errors.Is(err, runner.ErrSandboxLost) && ctx.Err() == nil {
			m.log.Warn("sandbox lost before the run; retrying on another",
				keyTemplate, template, keySandboxID, o.SandboxID)
			continue
		}
		return o, err
	}
}

// runLeased is runOnce with opts.OnLease around the run.
func (m *Manager) runLeased(ctx context.Context, sb runner.Sandbox, opts RunOptions, req runner.RunRequest, out runner.OutputFunc, exec *time.Duration) (runner.RunResult, error) {
	if opts.OnLease == nil {
		return m.runOnce(ctx, sb, req, out, exec)
	}
	done, err := opts.OnLease(sb)
	if err != nil {
		m.Release(sb)
		return runner.RunResult{}, err
	}
	defer done()
	return m.runOnce(ctx, sb, req, out, exec)
}

// runOnce runs req on sb and always releases sb, also on panic and as soon
// as ctx ends.
func (m *Manager) runOnce(ctx context.Context, sb runner.Sandbox, req runner.RunRequest, out runner.OutputFunc, exec *time.Duration) (runner.RunResult, error) {
	var once sync.Once
	release := func() { once.Do(func() { m.Release(sb) }) }
	defer release()
	stop := context.AfterFunc(ctx, release)
	defer stop()

	start := time.Now()
	res, err := sb.Run(ctx, req, out)
	*exec += time.Since(start)
	if err != nil {
		return res, fmt.Errorf("running in sandbox %s: %w", sb.ID(), err)
	}
	return res, nil
}
