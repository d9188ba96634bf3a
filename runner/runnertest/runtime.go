package runnertest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/paddock-dev/paddock/runner"
)

// StartFunc replaces Runtime.Start's default behaviour. It may call
// Runtime.NewSandbox to get a tracked sandbox to return.
type StartFunc func(ctx context.Context, spec runner.Spec) (runner.Sandbox, error)

// RunFunc replaces Sandbox.Run's default behaviour. Its ctx is also
// cancelled when the sandbox is destroyed or killed, as a real sandbox's run
// ends when the sandbox goes away.
type RunFunc func(ctx context.Context, req runner.RunRequest, out runner.OutputFunc) (runner.RunResult, error)

// Runtime is a fake runner.Runtime. The zero value is ready to use. Set the
// hook fields before the first Start; they are not guarded.
type Runtime struct {
	// StartFunc, when set, is called by Start instead of NewSandbox.
	StartFunc StartFunc
	// RunFunc is given to every sandbox made by NewSandbox.
	RunFunc RunFunc
	// KernelFunc is given to every sandbox made by NewSandbox; it sets up
	// (or fails) each kernel those sandboxes open.
	KernelFunc KernelFunc
	// StartDelay makes Start wait this long (or until ctx is done) before
	// starting, to simulate slow starts.
	StartDelay time.Duration

	mu        sync.Mutex
	starts    int
	started   int
	destroyed int
	sandboxes []*Sandbox
}

var _ runner.Runtime = (*Runtime)(nil)

// Start counts the call, waits StartDelay, then calls StartFunc or returns a
// new tracked sandbox.
func (r *Runtime) Start(ctx context.Context, spec runner.Spec) (runner.Sandbox, error) {
	r.mu.Lock()
	r.starts++
	r.mu.Unlock()

	if r.StartDelay > 0 {
		t := time.NewTimer(r.StartDelay)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("fake start: %w", ctx.Err())
		case <-t.C:
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("fake start: %w", err)
	}
	if r.StartFunc != nil {
		return r.StartFunc(ctx, spec)
	}
	return r.NewSandbox(spec), nil
}

// NewSandbox returns a tracked sandbox for spec whose Run uses r.RunFunc
// and whose OpenKernel uses r.KernelFunc.
func (r *Runtime) NewSandbox(spec runner.Spec) *Sandbox {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started++
	sb := &Sandbox{
		RunFunc:    r.RunFunc,
		KernelFunc: r.KernelFunc,
		Spec:       spec,
		id:         fmt.Sprintf("fake-%04d", r.started),
		rt:         r,
		done:       make(chan struct{}),
	}
	r.sandboxes = append(r.sandboxes, sb)
	return sb
}

func (r *Runtime) noteDestroyed() {
	r.mu.Lock()
	r.destroyed++
	r.mu.Unlock()
}

// Starts is the number of Start calls, failed ones included.
func (r *Runtime) Starts() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.starts
}

// Started is the number of tracked sandboxes made.
func (r *Runtime) Started() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.started
}

// Destroyed is the number of tracked sandboxes destroyed (each counted once).
func (r *Runtime) Destroyed() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.destroyed
}

// Live is Started minus Destroyed: the tracked sandboxes not yet destroyed.
func (r *Runtime) Live() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.started - r.destroyed
}

// Sandboxes returns the tracked sandboxes in the order they were made.
func (r *Runtime) Sandboxes() []*Sandbox {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*Sandbox(nil), r.sandboxes...)
}
