package core

import (
	"context"
	"errors"
	"time"

	"github.com/paddock-dev/paddock/egress"
	"github.com/paddock-dev/paddock/policy"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
)

// File is one file written into the sandbox's working directory before a
// run.
type File struct {
	// Path is relative to the working directory: clean, no "..".
	Path string
	// Content is the file's bytes, written as Encoding says.
	Content []byte
	// Encoding is "" or "utf8" (Content as is) or "base64" (Content is
	// standard base64 text, decoded by the core).
	Encoding string
}

// RunInput is one one-shot run.
type RunInput struct {
	// Language picks the template, by the rule of Config.Templates: the
	// one that has a module the code imports warm, else the language's
	// run default. Required unless Template is given.
	Language string
	// Template names the template to run on, in place of the rule; it
	// must be of Language when both are given.
	Template string
	// Code is the program. Required, non-empty.
	Code  string
	Files []File
	// Outputs are patterns of files to return once the program is over,
	// relative to the working directory, in path.Match syntax ("*" does
	// not cross a "/"). Their content together is capped at the run's
	// MaxOutputBytes, as each output stream is; see runner.RunResult.
	Outputs []string
	// Stdin is delivered to the program, then closed.
	Stdin []byte
	Args  []string
	Env   map[string]string
	// Timeout is the wall-time limit: 0 is the template's default, at most
	// Config.MaxTimeout.
	Timeout time.Duration
	// MaxOutputBytes caps each output stream: 0 is the server's cap,
	// Config.MaxOutputBytes, which it may not exceed.
	MaxOutputBytes int64
	// Limits replace the template's resource limits field by field.
	Limits Limits
	// Network names the hosts the run means to reach (egress rules,
	// network.go); nil: no network. What it gets is the server's
	// allowance narrowed by it.
	Network []string
}

// RunResult is a run's outcome and the template it ran on.
type RunResult struct {
	Template     string
	Runtime      string // the runtime that isolated the run's sandbox
	pool.Outcome        // Result runner.RunResult, Kind, SandboxID, Timing
	// Network is what a networked run's proxy saw; nil without a network.
	Network *NetworkReport
}

// runPlan is a checked run, ready for the pool.
type runPlan struct {
	template string
	req      runner.RunRequest
	opts     pool.RunOptions
	network  *egress.Policy // nil: no network
}

// RunPlan is a run CheckRun has validated and authorized, ready for
// RunPlanned: a door that must do work of its own between the checks and
// the run (REST's idempotency keys, its choice of a streamed answer)
// checks once and runs the plan, instead of having the run checked again.
// The zero RunPlan runs nothing.
type RunPlan struct {
	caller Caller
	plan   runPlan
	ok     bool
}

// errUncheckedPlan is a door's bug: a RunPlan CheckRun did not return.
var errUncheckedPlan = errors.New("core: RunPlanned with a plan CheckRun did not return")

// Template is the template the plan runs on.
func (p RunPlan) Template() string { return p.plan.template }

// Run runs in on a fresh sandbox of its language's template: CheckRun,
// then RunPlanned. out, when non-nil, receives the output as it comes.
func (s *Service) Run(ctx context.Context, c Caller, in RunInput, out runner.OutputFunc) (RunResult, error) {
	p, err := s.CheckRun(c, in)
	if err != nil {
		s.metrics.done(c.Door, "run", err)
		return RunResult{}, err
	}
	return s.RunPlanned(ctx, p, out)
}

// CheckRun checks in without running it or counting it against any
// limit: the caller's "run" scope and every range (KindInvalid naming
// the field). Its plan names the template the run goes to.
func (s *Service) CheckRun(c Caller, in RunInput) (RunPlan, error) {
	if err := s.Authorize(c, ScopeRun); err != nil {
		return RunPlan{}, err
	}
	plan, err := s.planRun(c, in)
	if err != nil {
		return RunPlan{}, err
	}
	return RunPlan{caller: c, plan: plan, ok: true}, nil
}

// RunPlanned runs a checked plan for the caller it was checked for,
// within the tenant's runs in flight (KindTooMany). out, when non-nil,
// receives the output as it comes. On an error the result still names
// the sandbox, if one was taken.
func (s *Service) RunPlanned(ctx context.Context, p RunPlan, out runner.OutputFunc) (res RunResult, err error) {
	c, plan := p.caller, p.plan
	defer func() {
		s.metrics.done(c.Door, "run", err)
		if p.ok {
			s.recordRun(c, plan.req.Code, plan.network, res, err)
		}
	}()
	if !p.ok {
		return res, &Error{Kind: KindInternal, Code: "internal", Message: "internal error", cause: errUncheckedPlan}
	}
	res.Template, res.Runtime = plan.template, s.runtimeOf[plan.template]
	arrived := time.Now()
	done, waited, err := s.tenants.startRun(ctx, c.Tenant, arrived.Add(s.pool.QueueDeadline()))
	if err != nil {
		res.Outcome.Timing.Queue = waited
		return res, s.fail(err)
	}
	defer done()
	plan.opts.Tenant = c.Tenant // waiting runs are served in turn across tenants
	plan.opts.Since = arrived   // one queue deadline for both waits
	if plan.network != nil {
		pol := *plan.network
		plan.opts.OnLease = func(sb runner.Sandbox) (func(), error) { return s.serveEgress(sb, pol, &res.Network, nil) }
	}
	res.Outcome, err = s.pool.RunWith(ctx, plan.template, plan.opts, plan.req, out)
	if err != nil {
		return res, s.fail(err)
	}
	describeOutputs(res.Outcome.Result.Outputs, plan.req.MaxOutputBytes)
	s.metrics.observeRun(plan.template, res.Outcome)
	return res, nil
}

// planRun checks in against the limits, in the order of RunInput's
// fields, and returns the pool's request for it.
func (s *Service) planRun(c Caller, in RunInput) (runPlan, error) {
	var p runPlan
	tgt, err := s.resolve(in.Language, in.Template, true, in.Code)
	if err != nil {
		return p, err
	}
	if in.Code == "" {
		return p, invalid("invalid_request", "code must not be empty")
	}
	p.req.Code = in.Code

	ms := milliseconds(in.Timeout)
	if err := policy.Optional("timeout_ms", ms, s.cfg.MaxTimeout.Milliseconds(), tgt.defaultTimeout.Milliseconds()); err != nil {
		return p, outOfRange(err)
	}
	p.req.Timeout = in.Timeout
	if in.Timeout == 0 {
		p.req.Timeout = tgt.defaultTimeout
	}

	maxOut := s.cfg.MaxOutputBytes
	if err := policy.Optional("max_output_bytes", in.MaxOutputBytes, maxOut, -1); err != nil {
		return p, outOfRange(err)
	}
	p.req.MaxStdout, p.req.MaxStderr = maxOut, maxOut
	if in.MaxOutputBytes != 0 {
		p.req.MaxStdout, p.req.MaxStderr = in.MaxOutputBytes, in.MaxOutputBytes
	}

	if p.req.Files, err = decodeFiles(in.Files); err != nil {
		return p, err
	}
	if p.req.Outputs, err = checkOutputs(in.Outputs); err != nil {
		return p, err
	}
	if p.req.Outputs != nil {
		p.req.MaxOutputBytes, p.req.MaxOutputFiles = p.req.MaxStdout, maxOutputFiles
	}
	if p.req.Args, err = checkArgs(in.Args); err != nil {
		return p, err
	}
	if p.req.Env, err = checkEnv(in.Env); err != nil {
		return p, err
	}
	if len(in.Stdin) > 0 {
		p.req.Stdin = in.Stdin
	}
	if p.opts.Limits, err = s.runnerLimits(in.Limits); err != nil {
		return p, err
	}
	if p.network, err = s.planNetwork(s.allowanceFor(c, tgt.template), in.Network); err != nil {
		return p, err
	}
	if p.network != nil {
		p.opts.Network, p.req.Env = true, withProxy(p.req.Env)
	}
	p.template = tgt.template
	return p, nil
}

// Network is the egress policy the plan's run gets; nil without a
// network.
func (p RunPlan) Network() *NetworkPolicy { return p.plan.network }
