package core

import (
	"context"
	"time"

	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/policy"
	"github.com/paddock-dev/paddock/runner"
)

// ExecuteInput is one cell.
type ExecuteInput struct {
	// Code is the cell. Required, non-empty.
	Code string
	// Timeout is the cell's wall-time limit: 0 is the kernels' default, at
	// most their MaxTimeout.
	Timeout time.Duration
	// Env is set in the interpreter's environment before the cell runs.
	Env map[string]string
	// Queue makes a call that finds the session busy wait its turn
	// instead of failing with KindConflict ("busy").
	Queue bool
	// Input answers the cell's reads of standard input (Python's input()
	// and getpass, Node's input() Promise); see runner.InputFunc. Nil
	// means stdin is not allowed: the read raises (Python:
	// StdinNotImplementedError, "raw_input was called, but this frontend
	// does not support input requests.").
	Input runner.InputFunc
}

// Execute runs one cell in the caller's session id. events, when
// non-nil, receives the cell's output events in order before Execute
// returns. A cell that raises is a result (Status "error"), not an error.
// If ctx ends while the cell runs, the cell is interrupted and the error
// is KindCanceled.
func (s *Service) Execute(ctx context.Context, c Caller, id string, in ExecuteInput,
	events func(runner.Event)) (x kernels.Execution, err error) {
	defer func() { s.metrics.done(c.Door, "execute", err) }()
	if err := s.sessionsFor(c); err != nil {
		return x, err
	}
	opts, err := s.executeOptions(in)
	if err != nil {
		return x, err
	}
	network := s.cellNetwork(c, id)
	begin := time.Now()
	var sizes cellSizes
	x, err = s.kernels.Execute(ctx, c.Tenant, id, opts, sizes.wrap(events))
	s.recordCell(c, id, in.Code, network, x, &sizes, time.Since(begin), err)
	if x.Status != "" {
		s.history.add(id, Cell{Count: x.ExecutionCount, Code: in.Code, Status: x.Status, At: s.cfg.Now()}, s.kernels)
	}
	if err != nil {
		return x, s.fail(err)
	}
	s.metrics.observeExecute(x, time.Since(begin))
	return x, nil
}

// executeOptions checks in against the kernels' limits: code, timeout,
// env.
func (s *Service) executeOptions(in ExecuteInput) (kernels.ExecuteOptions, error) {
	var out kernels.ExecuteOptions
	if in.Code == "" {
		return out, invalid("invalid_request", "code must not be empty")
	}
	out.Code = in.Code
	cfg := s.kernels.Config()
	if err := policy.Optional("timeout_ms", milliseconds(in.Timeout), cfg.MaxTimeout.Milliseconds(), cfg.DefaultTimeout.Milliseconds()); err != nil {
		return out, outOfRange(err)
	}
	out.Timeout = in.Timeout
	var err error
	if out.Env, err = checkEnv(in.Env); err != nil {
		return out, err
	}
	out.Queue = in.Queue
	out.Input = in.Input
	return out, nil
}

// History is the caller's session id's cells, oldest first: the last
// maxCells of them, each cell's code cut at maxCellCode bytes.
func (s *Service) History(c Caller, id string) ([]Cell, error) {
	if err := s.sessionsFor(c); err != nil {
		return nil, err
	}
	if _, err := s.kernels.Get(c.Tenant, id); err != nil {
		return nil, s.fail(err)
	}
	return s.history.cells(id), nil
}
