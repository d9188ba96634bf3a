package runnertest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/paddock-dev/paddock/runner"
)

// KernelFunc is called by Sandbox.OpenKernel with the new kernel before it
// is returned: it may set the kernel's hooks, or fail the open.
type KernelFunc func(ctx context.Context, opts runner.KernelOptions, k *Kernel) error

// ExecuteFunc replaces Kernel.Execute's scripted interpreter. Its ctx ends
// when the caller's does, at req.Timeout, on Interrupt and when the kernel
// is lost; CellEnd turns that into what a real kernel reports.
type ExecuteFunc func(ctx context.Context, req runner.ExecuteRequest, events func(runner.Event)) (runner.ExecuteResult, error)

// Kernel is a fake runner.Kernel: a tiny scripted interpreter (see
// Execute), an in-memory working directory and hook fields. Make one with
// Sandbox.OpenKernel or NewKernel; set the hooks before first use (in a
// KernelFunc); they are not guarded.
type Kernel struct {
	ExecuteFunc   ExecuteFunc
	InterruptFunc func(ctx context.Context) error
	RestartFunc   func(ctx context.Context) error
	WriteFileFunc func(ctx context.Context, path string, content []byte) error
	ReadFileFunc  func(ctx context.Context, path string, maxBytes int64) ([]byte, error)
	ListFilesFunc func(ctx context.Context, dir string) ([]runner.FileInfo, error)
	CommandFunc   CommandFunc
	// CompleteFunc, InspectFunc and IsCompleteFunc replace the default
	// answers of runner.Introspector (see introspect.go).
	CompleteFunc   func(ctx context.Context, code string, cursorPos int) (runner.Completion, error)
	InspectFunc    func(ctx context.Context, code string, cursorPos, detailLevel int) (runner.Inspection, error)
	IsCompleteFunc func(ctx context.Context, code string) (runner.Completeness, error)

	// Options are the options the kernel was opened with.
	Options runner.KernelOptions

	lost     chan struct{}
	loseOnce sync.Once

	mu         sync.Mutex
	count      int               // execution count
	vars       map[string]string // the interpreter's state
	files      map[string][]byte // the working directory
	cancelCell context.CancelCauseFunc
	executes   int
	interrupts int
	restarts   int
	overlaps   int
	requests   []runner.ExecuteRequest
	commands   []runner.CommandRequest
}

var _ runner.Kernel = (*Kernel)(nil)
var _ runner.KernelOpener = (*Sandbox)(nil)

// FileMTime is the modification time the fake reports for every file.
var FileMTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// NewKernel returns a kernel that belongs to no sandbox.
func NewKernel(opts runner.KernelOptions) *Kernel {
	return &Kernel{
		Options: opts,
		lost:    make(chan struct{}),
		vars:    map[string]string{},
		files:   map[string][]byte{},
	}
}

// OpenKernel turns the never-used sandbox into a kernel. A second use of
// the sandbox (Run or OpenKernel) fails with runner.ErrUsed; a dead sandbox
// fails with runner.ErrSandboxLost. Destroying or killing the sandbox
// loses the kernel.
func (s *Sandbox) OpenKernel(ctx context.Context, opts runner.KernelOptions) (runner.Kernel, error) {
	if s.uses.Add(1) > 1 {
		return nil, fmt.Errorf("fake sandbox %s: %w", s.id, runner.ErrUsed)
	}
	select {
	case <-s.done:
		return nil, fmt.Errorf("fake sandbox %s: %w", s.id, runner.ErrSandboxLost)
	default:
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("fake sandbox %s: %w", s.id, err)
	}
	k := NewKernel(opts)
	if s.KernelFunc != nil {
		if err := s.KernelFunc(ctx, opts, k); err != nil {
			return nil, err
		}
	}
	s.kernel.Store(k)
	go func() {
		select {
		case <-s.done:
			k.Lose()
		case <-k.lost:
		}
	}()
	return k, nil
}

// Kernel returns the kernel the sandbox opened, or nil.
func (s *Sandbox) Kernel() *Kernel { return s.kernel.Load() }

// Lost is closed by Lose.
func (k *Kernel) Lost() <-chan struct{} { return k.lost }

// Lose simulates the interpreter dying: Lost is closed, a running cell
// ends with runner.ErrKernelLost and every later call fails with it.
func (k *Kernel) Lose() {
	k.loseOnce.Do(func() { close(k.lost) })
}

func (k *Kernel) isLost() bool {
	select {
	case <-k.lost:
		return true
	default:
		return false
	}
}

func (k *Kernel) lostErr() error {
	return fmt.Errorf("fake kernel: %w", runner.ErrKernelLost)
}

// Executes is the number of Execute calls, refused ones included.
func (k *Kernel) Executes() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.executes
}

// Interrupts is the number of Interrupt calls.
func (k *Kernel) Interrupts() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.interrupts
}

// Restarts is the number of Restart calls.
func (k *Kernel) Restarts() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.restarts
}

// Overlaps counts calls to Execute or Restart made while a cell ran: the
// contract says callers serialise them, so a correct caller keeps it 0.
func (k *Kernel) Overlaps() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.overlaps
}

// Requests returns the requests Execute received, in order.
func (k *Kernel) Requests() []runner.ExecuteRequest {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]runner.ExecuteRequest(nil), k.requests...)
}

// Running reports whether a cell is running.
func (k *Kernel) Running() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.cancelCell != nil
}
