package runnertest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/paddock-dev/paddock/runner"
)

// Causes of a fake cell's context ending early; CellEnd reads them.
var (
	errInterrupted = errors.New("fake kernel: interrupted")
	errCellTimeout = errors.New("fake kernel: cell timed out")
)

// FakeExec is the Exec every fake cell reports unless its ExecuteFunc sets
// one, so that tests can expect it literally.
const FakeExec = time.Millisecond

// Execute runs one cell with ExecuteFunc or, by default, the scripted
// interpreter (see script). It refuses a call made while another cell runs
// (counted by Overlaps). The result's ExecutionCount and Exec are filled in
// when the cell leaves them zero.
func (k *Kernel) Execute(ctx context.Context, req runner.ExecuteRequest, events func(runner.Event)) (runner.ExecuteResult, error) {
	if k.isLost() {
		return runner.ExecuteResult{}, k.lostErr()
	}
	cellCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if req.Timeout > 0 {
		var stop context.CancelFunc
		cellCtx, stop = context.WithTimeoutCause(cellCtx, req.Timeout, errCellTimeout)
		defer stop()
	}

	k.mu.Lock()
	k.executes++
	k.requests = append(k.requests, req)
	if k.cancelCell != nil {
		k.overlaps++
		k.mu.Unlock()
		return runner.ExecuteResult{}, errors.New("fake kernel: Execute while another cell runs")
	}
	k.cancelCell = cancel
	k.count++
	n := k.count
	k.mu.Unlock()
	defer func() {
		k.mu.Lock()
		k.cancelCell = nil
		k.mu.Unlock()
	}()
	go func() {
		select {
		case <-k.lost:
			cancel(runner.ErrKernelLost)
		case <-cellCtx.Done():
		}
	}()

	var (
		res runner.ExecuteResult
		err error
	)
	if k.ExecuteFunc != nil {
		res, err = k.ExecuteFunc(cellCtx, req, events)
	} else {
		res, err = k.script(cellCtx, n, req, events)
	}
	if err != nil {
		return res, err
	}
	if res.ExecutionCount == 0 {
		res.ExecutionCount = n
	}
	if res.Exec == 0 {
		res.Exec = FakeExec
	}
	return res, nil
}

// CellEnd reports what a real kernel would once a fake cell's ctx ended:
// an interrupted or timed-out cell is an aborted result, a lost kernel is
// runner.ErrKernelLost, anything else the context's error.
func CellEnd(ctx context.Context) (runner.ExecuteResult, error) {
	cause := context.Cause(ctx)
	switch {
	case errors.Is(cause, errInterrupted):
		return runner.ExecuteResult{Status: runner.StatusAborted, Reason: runner.ReasonInterrupted}, nil
	case errors.Is(cause, errCellTimeout):
		return runner.ExecuteResult{Status: runner.StatusAborted, Reason: runner.ReasonTimeout}, nil
	case errors.Is(cause, runner.ErrKernelLost):
		return runner.ExecuteResult{}, fmt.Errorf("fake kernel: %w", runner.ErrKernelLost)
	}
	return runner.ExecuteResult{}, fmt.Errorf("fake kernel: %w", ctx.Err())
}

// Interrupt calls InterruptFunc or, by default, ends the running cell's
// context (CellEnd then reports ReasonInterrupted). It is a no-op when no
// cell runs.
func (k *Kernel) Interrupt(ctx context.Context) error {
	if k.isLost() {
		return k.lostErr()
	}
	k.mu.Lock()
	k.interrupts++
	cancel := k.cancelCell
	k.mu.Unlock()
	if k.InterruptFunc != nil {
		return k.InterruptFunc(ctx)
	}
	if cancel != nil {
		cancel(errInterrupted)
	}
	return nil
}

// Restart calls RestartFunc or, by default, forgets the interpreter's
// state and resets the execution count. Files stay, as on disk.
func (k *Kernel) Restart(ctx context.Context) error {
	if k.isLost() {
		return k.lostErr()
	}
	k.mu.Lock()
	k.restarts++
	if k.cancelCell != nil {
		k.overlaps++
	}
	k.mu.Unlock()
	if k.RestartFunc != nil {
		return k.RestartFunc(ctx)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("fake kernel: restart: %w", err)
	}
	k.mu.Lock()
	k.count = 0
	k.vars = map[string]string{}
	k.mu.Unlock()
	return nil
}
