package runner

import (
	"context"
	"time"
)

// KernelOpener is the optional ability of a sandbox to become a stateful
// kernel instead of running one program. Find it by type assertion on a
// never-used Sandbox. A sandbox that opened a kernel never runs one-shot.
type KernelOpener interface {
	OpenKernel(ctx context.Context, opts KernelOptions) (Kernel, error)
}

// KernelOptions configure a kernel when it opens.
type KernelOptions struct {
	// Env is added to the interpreter's environment for the whole session.
	Env map[string]string
}

// Kernel is a persistent interpreter inside a sandbox: state survives from
// one Execute to the next. One Execute runs at a time; callers serialise.
// Interrupt may be called concurrently with Execute. Destroying the
// sandbox ends the kernel.
type Kernel interface {
	// Execute runs one cell. events, when non-nil, receives every output
	// event in order while the cell runs, before Execute returns. A cell
	// that fails is a result (Status "error"); err != nil means the kernel
	// could not run it (ErrKernelLost, context end).
	Execute(ctx context.Context, req ExecuteRequest, events func(Event)) (ExecuteResult, error)
	// Interrupt stops the running cell (Python: KeyboardInterrupt; Node:
	// the running script is terminated). Earlier state stays. It is a no-op
	// when no cell runs.
	Interrupt(ctx context.Context) error
	// Restart replaces the interpreter with a fresh one: state is gone, the
	// execution count starts again at zero.
	Restart(ctx context.Context) error
	// WriteFile, ReadFile and ListFiles work inside the kernel's working
	// directory. Paths are resolved inside the sandbox by the agent and may
	// not leave the working directory. A *FileError says why the sandbox
	// refused one (a missing file is also ErrNotFound).
	WriteFile(ctx context.Context, path string, content []byte) error
	ReadFile(ctx context.Context, path string, maxBytes int64) ([]byte, error)
	ListFiles(ctx context.Context, dir string) ([]FileInfo, error)
	// Lost is closed when the interpreter or its sandbox died. Every later
	// call fails with ErrKernelLost.
	Lost() <-chan struct{}
}

// ExecuteRequest is one cell.
type ExecuteRequest struct {
	Code string
	// Timeout is the cell's wall-time limit. At the limit the cell is
	// interrupted; if it does not stop within a grace period the kernel is
	// killed and reported lost.
	Timeout time.Duration
	// Env is set in the interpreter's environment before the cell runs.
	Env map[string]string
	// MaxOutput caps the bytes of stream output (stdout+stderr) the cell
	// may produce; past it the cell is interrupted (ReasonOutputLimit).
	MaxOutput int64
	// Input, when non-nil, answers the cell's reads of standard input
	// (see InputFunc). Nil means the cell may not read input: the read
	// raises at once, as Jupyter's kernels do for a front end that does
	// not allow stdin (Python: StdinNotImplementedError, "raw_input was
	// called, but this frontend does not support input requests.").
	Input InputFunc
}

// InputFunc answers one read of standard input by a running cell: Python's
// input() and getpass.getpass(), Node's input() (a global that returns a
// Promise). It is called on a goroutine of its own while the cell waits,
// one read at a time. ctx ends when the cell ends (interrupted, timed out,
// lost, or done), and the answer is then dropped. The returned text is
// what the read returns, without a trailing newline; an error makes the
// read raise EOFError (Python) or reject (Node) with its text. A reply
// over MaxInputBytes is refused the same way. Waiting for input does not
// stop the cell's clock: its timeout and Interrupt still end it.
type InputFunc func(ctx context.Context, req InputRequest) (string, error)

// InputRequest is a cell's request for a line of input.
type InputRequest struct {
	// Prompt is the text the cell shows before the input (input()'s
	// argument).
	Prompt string
	// Password says the input should not be echoed (getpass).
	Password bool
}

// MaxInputBytes bounds one reply to an input request.
const MaxInputBytes = 1 << 20

// EventType names a kernel output event; the values follow Jupyter's
// message types so that each door is a thin translation.
type EventType string

const (
	EventStream        EventType = "stream"         // Stream, Text
	EventDisplayData   EventType = "display_data"   // Data, Metadata
	EventExecuteResult EventType = "execute_result" // Data, Metadata, ExecutionCount
	EventError         EventType = "error"          // Error
	// EventUpdateDisplayData replaces the output shown earlier with the
	// same display ID (Transient["display_id"]) by Data and Metadata.
	EventUpdateDisplayData EventType = "update_display_data" // Data, Metadata, Transient
	// EventClearOutput clears the cell's output shown so far; with Wait,
	// only once the next output arrives.
	EventClearOutput EventType = "clear_output" // Wait
)

// Event is one output of a running cell.
type Event struct {
	Type   EventType `json:"type"`
	Stream Stream    `json:"stream,omitempty"`
	Text   string    `json:"text,omitempty"`
	// Data is a MIME bundle: "text/plain", "text/html", "image/png"
	// (base64), "image/svg+xml", "application/json" (any JSON value),
	// "text/markdown"…
	Data           map[string]any `json:"data,omitempty"`
	Metadata       map[string]any `json:"metadata,omitempty"`
	ExecutionCount int            `json:"execution_count,omitempty"`
	Error          *ExecError     `json:"error,omitempty"`
	// Transient is Jupyter's transient dict of a display_data or an
	// update_display_data: {"display_id": "…"} for an output that may be
	// updated later (always set on update_display_data). It is not part of
	// the output to keep.
	Transient map[string]any `json:"transient,omitempty"`
	// Wait is clear_output's flag: clear when the next output arrives.
	Wait bool `json:"wait,omitempty"`
}

// ExecError is an exception raised by a cell.
type ExecError struct {
	Name      string   `json:"name"`
	Value     string   `json:"value"`
	Traceback []string `json:"traceback"`
}

// Execution statuses, as in Jupyter's execute_reply.
const (
	StatusOK      = "ok"
	StatusError   = "error"
	StatusAborted = "aborted"
)

// ExecuteResult is how a cell ended.
type ExecuteResult struct {
	ExecutionCount int
	// Status is StatusOK, StatusError (the cell raised; Error is set) or
	// StatusAborted (interrupted, timed out, output limit).
	Status string
	// Reason is ReasonOK, ReasonError, ReasonTimeout, ReasonOutputLimit,
	// ReasonInterrupted or, when the kernel died, ReasonOOM or
	// ReasonKernelLost.
	Reason Reason
	Error  *ExecError
	// Exec is the cell's wall time measured on the host.
	Exec time.Duration
	// Lost says the kernel died with the cell: it was killed because the
	// cell did not stop when interrupted (Reason says what for: its
	// timeout or its output limit), or it died of itself (ReasonOOM,
	// ReasonKernelLost). Its state is gone, and Kernel.Lost is closed or
	// about to be.
	Lost bool
}

const (
	ReasonInterrupted Reason = "interrupted" // Interrupt stopped the cell
	ReasonKernelLost  Reason = "kernel_lost" // the interpreter or sandbox died
)

// FileInfo describes one entry of a kernel's working directory.
type FileInfo struct {
	Name  string    `json:"name"`
	Size  int64     `json:"size"`
	IsDir bool      `json:"is_dir"`
	Mode  string    `json:"mode"`
	MTime time.Time `json:"mtime"`
}
