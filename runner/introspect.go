package runner

import "context"

// Introspector is the optional ability of a Kernel to answer questions
// about code from its live interpreter's state, without running the code as
// a cell: completion, inspection and whether the code is a complete
// statement (Jupyter's complete, inspect and is_complete requests). Find it
// by type assertion on a Kernel.
//
// The calls do not take the kernel's turn and may come while a cell runs:
// Python answers at once from a thread of its own; Node answers between
// the running cell's awaits, or when a synchronous cell ends (ctx bounds
// the wait). The answer reflects the state at that moment. Cursor
// positions count Unicode code points (Jupyter's protocol 5.2 and later),
// in any language. A kernel that died is ErrKernelLost.
type Introspector interface {
	// Complete offers what may stand at cursorPos in code: names of the
	// user's namespace, builtins, keywords, attributes of the object
	// before a dot, module names after "import" (Python).
	Complete(ctx context.Context, code string, cursorPos int) (Completion, error)
	// Inspect describes the object named at, or called around, cursorPos:
	// detailLevel 0 its signature, type and documentation (Python), its
	// type and text (Node); 1 adds the source where there is one.
	Inspect(ctx context.Context, code string, cursorPos, detailLevel int) (Inspection, error)
	// IsComplete says whether code is ready to run as it stands.
	IsComplete(ctx context.Context, code string) (Completeness, error)
}

// Completion is the answer to Complete: Matches replace the code from
// CursorStart to CursorEnd (code-point offsets). No match is an empty,
// non-nil list.
type Completion struct {
	Matches     []string       `json:"matches"`
	CursorStart int            `json:"cursor_start"`
	CursorEnd   int            `json:"cursor_end"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// Inspection is the answer to Inspect. Found says a name was resolved;
// Data is then a MIME bundle with at least "text/plain".
type Inspection struct {
	Found    bool           `json:"found"`
	Data     map[string]any `json:"data,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Completeness statuses, as in Jupyter's is_complete_reply.
const (
	CodeComplete   = "complete"   // ready to run
	CodeIncomplete = "incomplete" // more lines are expected; Indent is the next line's
	CodeInvalid    = "invalid"    // a syntax error more lines cannot fix
	CodeUnknown    = "unknown"    // the kernel cannot tell
)

// Completeness is the answer to IsComplete.
type Completeness struct {
	Status string `json:"status"`
	Indent string `json:"indent,omitempty"`
}
