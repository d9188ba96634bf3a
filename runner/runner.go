package runner

import "context"

// Runtime starts sandboxes. Implementations must be safe for concurrent use.
type Runtime interface {
	// Start creates a sandbox for spec and returns once its agent has
	// reported ready (and, when the spec asks for it, the interpreter is
	// pre-started and waiting for code).
	Start(ctx context.Context, spec Spec) (Sandbox, error)
}

// Sandbox is one isolated environment driven through its in-sandbox agent.
// A sandbox used for a one-shot run is never used for a second run.
type Sandbox interface {
	// ID is the runtime's unique identifier of the sandbox.
	ID() string
	// Run executes req once. out, when non-nil, receives output chunks as
	// they arrive, in order, before Run returns. A failing user program is a
	// result (Reason, ExitCode), not an error: err != nil means the sandbox
	// could not run it (ErrUsed, ErrSandboxLost, context cancellation).
	Run(ctx context.Context, req RunRequest, out OutputFunc) (RunResult, error)
	// Done is closed when the sandbox is no longer alive (destroyed, or its
	// agent went away).
	Done() <-chan struct{}
	// Destroy kills everything in the sandbox and removes it. It waits until
	// the sandbox is gone and is safe to call more than once.
	Destroy(ctx context.Context) error
}

// OutputFunc receives a chunk of a stream while a run is in progress. It
// must not retain chunk after returning.
type OutputFunc func(stream Stream, chunk []byte)
