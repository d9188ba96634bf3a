package runnertest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paddock-dev/paddock/runner"
)

// Sandbox is a fake runner.Sandbox. Make one with Runtime.NewSandbox (so it
// is counted) or NewSandbox; set RunFunc before handing it out.
type Sandbox struct {
	// RunFunc, when set, replaces the default run, which echoes Code on
	// stdout (capped at MaxStdout) and exits 0.
	RunFunc RunFunc
	// KernelFunc, when set, is called by OpenKernel with the new kernel
	// before it is returned.
	KernelFunc KernelFunc
	// Spec is the spec the sandbox was started with.
	Spec runner.Spec

	id   string
	rt   *Runtime
	done chan struct{}
	once sync.Once

	uses     atomic.Int32 // Run and OpenKernel calls: a sandbox serves one
	runs     atomic.Int32
	destroys atomic.Int32
	kernel   atomic.Pointer[Kernel]
}

var _ runner.Sandbox = (*Sandbox)(nil)

// NewSandbox returns an untracked sandbox with the given id.
func NewSandbox(id string, run RunFunc) *Sandbox {
	return &Sandbox{RunFunc: run, id: id, done: make(chan struct{})}
}

// ID returns the sandbox's id.
func (s *Sandbox) ID() string { return s.id }

// Done is closed by Destroy or Kill.
func (s *Sandbox) Done() <-chan struct{} { return s.done }

// Run runs req once. A second call, or one after OpenKernel, fails with
// runner.ErrUsed; a call on a dead sandbox fails with runner.ErrSandboxLost.
func (s *Sandbox) Run(ctx context.Context, req runner.RunRequest, out runner.OutputFunc) (runner.RunResult, error) {
	s.runs.Add(1)
	if s.uses.Add(1) > 1 {
		return runner.RunResult{}, fmt.Errorf("fake sandbox %s: %w", s.id, runner.ErrUsed)
	}
	select {
	case <-s.done:
		return runner.RunResult{}, fmt.Errorf("fake sandbox %s: %w", s.id, runner.ErrSandboxLost)
	default:
	}
	if err := ctx.Err(); err != nil {
		return runner.RunResult{}, fmt.Errorf("fake sandbox %s: %w", s.id, err)
	}
	if s.RunFunc == nil {
		return echo(req, out), nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	return s.RunFunc(ctx, req, out)
}

// Destroy marks the sandbox gone. Only the first call counts.
func (s *Sandbox) Destroy(ctx context.Context) error {
	if s.destroys.Add(1) == 1 {
		s.once.Do(func() { close(s.done) })
		if s.rt != nil {
			s.rt.noteDestroyed()
		}
	}
	return nil
}

// Kill simulates the sandbox dying on its own: Done is closed but the
// sandbox still counts as live until Destroy.
func (s *Sandbox) Kill() {
	s.once.Do(func() { close(s.done) })
}

// Runs is the number of Run calls.
func (s *Sandbox) Runs() int { return int(s.runs.Load()) }

// Destroys is the number of Destroy calls.
func (s *Sandbox) Destroys() int { return int(s.destroys.Load()) }

// Destroyed reports whether Destroy was called.
func (s *Sandbox) Destroyed() bool { return s.destroys.Load() > 0 }

func echo(req runner.RunRequest, out runner.OutputFunc) runner.RunResult {
	stdout := []byte(req.Code)
	truncated := false
	if req.MaxStdout > 0 && int64(len(stdout)) > req.MaxStdout {
		stdout, truncated = stdout[:req.MaxStdout], true
	}
	if out != nil && len(stdout) > 0 {
		out(runner.Stdout, stdout)
	}
	res := runner.RunResult{
		Stdout:          stdout,
		Stderr:          []byte{},
		Reason:          runner.ReasonOK,
		StdoutTruncated: truncated,
		Exec:            time.Microsecond,
	}
	if truncated {
		res.Reason = runner.ReasonOutputLimit
	}
	return res
}
