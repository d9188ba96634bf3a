package wire

import "time"

// Kernel mode: after Hello the host may send KernelOpen instead of Run. The
// agent then turns its pre-started interpreter into a kernel that keeps
// its state between cells, and serves Execute, Interrupt, Restart and the
// file requests until the host closes the channel. Stdout and Stderr
// frames during a cell carry what child processes write to the
// interpreter's descriptors 1 and 2; output of the interpreter's own
// language-level streams arrives as stream Events, in order with the other
// events.

// KernelOpen asks for kernel mode. With Attach set it opens nothing: a
// host that restored a hibernated kernel's sandbox asks whether the kernel
// it had is still there, and the Ack says so, with the kernel's execution
// count in Count; a sandbox with no kernel open refuses it (NotFound).
type KernelOpen struct {
	ID     uint64            `json:"id"`
	Env    map[string]string `json:"env,omitempty"`
	Attach bool              `json:"attach,omitempty"`
}

// Request is a request with no arguments but its ID (Interrupt, Restart).
type Request struct {
	ID uint64 `json:"id"`
}

// Execute runs one cell. At TimeoutMS the agent interrupts the cell, and
// kills the interpreter (Lost) if it has not ended InterruptGraceMS later.
// MaxOutput caps the cell's stream bytes; past it the cell is interrupted.
type Execute struct {
	ID        uint64            `json:"id"`
	Code      string            `json:"code"`
	TimeoutMS int64             `json:"timeout_ms"`
	Env       map[string]string `json:"env,omitempty"`
	MaxOutput int64             `json:"max_output"`
	// Stdin says the cell may read input (see InputRequest); without it a
	// read raises at once.
	Stdin bool `json:"stdin,omitempty"`
}

// InterruptGraceMS is how long a timed-out cell may take to stop after its
// interrupt before the agent kills the interpreter.
const InterruptGraceMS = 2000

// Event is one output of the cell with ID. Type is one of "stream",
// "display_data", "execute_result", "error", "update_display_data",
// "clear_output" (Jupyter's message types).
type Event struct {
	ID             uint64         `json:"id"`
	Type           string         `json:"type"`
	Stream         string         `json:"stream,omitempty"` // "stdout" | "stderr"
	Text           string         `json:"text,omitempty"`
	Data           map[string]any `json:"data,omitempty"` // MIME bundle
	Metadata       map[string]any `json:"metadata,omitempty"`
	ExecutionCount int            `json:"execution_count,omitempty"`
	Error          *ExecError     `json:"error,omitempty"`
	Transient      map[string]any `json:"transient,omitempty"` // display_id of a display that may be updated
	Wait           bool           `json:"wait,omitempty"`      // clear_output
}

// ExecError is an exception raised by a cell.
type ExecError struct {
	Name      string   `json:"name"`
	Value     string   `json:"value"`
	Traceback []string `json:"traceback"`
}

// Done ends the cell with ID. Status is "ok", "error" or "aborted"; Reason
// is "ok", "error", "interrupted", "timeout", "output_limit" or
// "kernel_lost" (then a Lost frame follows or came before).
type Done struct {
	ID             uint64     `json:"id"`
	ExecutionCount int        `json:"execution_count"`
	Status         string     `json:"status"`
	Reason         string     `json:"reason"`
	Error          *ExecError `json:"error,omitempty"`
	// Lost says the interpreter died with the cell, a Lost frame right
	// behind: killed because the cell did not stop InterruptGraceMS after
	// the interrupt of its timeout or output limit (Reason says which), or
	// dead of itself ("kernel_lost").
	Lost bool `json:"lost,omitempty"`
}

// FileWrite writes Content to Path, relative to the working directory.
type FileWrite struct {
	ID      uint64 `json:"id"`
	Path    string `json:"path"`
	Content []byte `json:"content"`
}

// FileRead reads Path (at most Max bytes; more is an error) or, for
// FileList, lists the directory Path ("" or "." is the working directory).
type FileRead struct {
	ID   uint64 `json:"id"`
	Path string `json:"path"`
	Max  int64  `json:"max,omitempty"`
}

// FileEntry is one directory entry in an Ack to FileList.
type FileEntry struct {
	Name  string    `json:"name"`
	Size  int64     `json:"size"`
	IsDir bool      `json:"is_dir"`
	Mode  string    `json:"mode"`
	MTime time.Time `json:"mtime"`
}

// Ack answers the request with ID. Error is empty on success; BadRequest
// (the path escapes, is malformed, is too large…) and NotFound refine it,
// and Code, on a file request, says which of the FileErr codes it was.
type Ack struct {
	ID         uint64      `json:"id"`
	Error      string      `json:"error,omitempty"`
	BadRequest bool        `json:"bad_request,omitempty"`
	NotFound   bool        `json:"not_found,omitempty"`
	Code       string      `json:"code,omitempty"`
	Content    []byte      `json:"content,omitempty"`
	Entries    []FileEntry `json:"entries,omitempty"`
	// PID, in the Ack to a Command, is the started command's process ID
	// inside the sandbox.
	PID int `json:"pid,omitempty"`
	// Count, in the Ack to an attaching KernelOpen, is the kernel's
	// execution count.
	Count int `json:"count,omitempty"`
	// Answer, in the Ack to an Introspect, is the interpreter's answer.
	Answer *Answer `json:"answer,omitempty"`
}

// Lost reports that the kernel's interpreter died (OOM, killed, exited).
// The agent starts no new interpreter on its own.
type Lost struct {
	Message string `json:"message"`
	Signal  int    `json:"signal,omitempty"`
	// Reason is "oom" when the agent saw the interpreter die of its
	// language runtime's memory ceiling, and empty otherwise.
	Reason string `json:"reason,omitempty"`
}
