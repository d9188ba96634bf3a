package wire

// Introspection and input in kernel mode.
//
// The host may ask about code without running it (Introspect, answered by
// an Ack whose Answer is set): the agent passes the question to the
// interpreter, which answers from its live state, even while a cell runs.
//
// A running cell whose Execute had Stdin set may read a line of input: the
// agent sends an InputRequest tagged with the cell's ID, and the host
// answers with one InputReply. At most one request is outstanding per
// cell; a reply for a cell that is over, or that asked nothing, is
// dropped.

// Introspection operations.
const (
	OpComplete   = "complete"
	OpInspect    = "inspect"
	OpIsComplete = "is_complete"
	// OpReseed asks nothing about code: the interpreter draws fresh seeds
	// for its random generators, as a clone of a snapshot does before its
	// first request. The host asks it of each sandbox forked from one
	// image. Python only: Node's generator cannot be reseeded.
	OpReseed = "reseed"
)

// Introspect asks the interpreter about Code. CursorPos counts Unicode
// code points; DetailLevel is inspect's (0 or 1).
type Introspect struct {
	ID          uint64 `json:"id"`
	Op          string `json:"op"`
	Code        string `json:"code"`
	CursorPos   int    `json:"cursor_pos"`
	DetailLevel int    `json:"detail_level,omitempty"`
}

// Answer is the interpreter's answer to an Introspect, in the Ack. The
// fields of the Op asked are set: complete (Matches, CursorStart,
// CursorEnd, Metadata), inspect (Found, Data, Metadata), is_complete
// (Status, Indent).
type Answer struct {
	Matches     []string       `json:"matches,omitempty"`
	CursorStart int            `json:"cursor_start,omitempty"`
	CursorEnd   int            `json:"cursor_end,omitempty"`
	Found       bool           `json:"found,omitempty"`
	Data        map[string]any `json:"data,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	Status      string         `json:"status,omitempty"`
	Indent      string         `json:"indent,omitempty"`
}

// InputRequest: the running cell ID waits for a line of input.
type InputRequest struct {
	ID       uint64 `json:"id"`
	Prompt   string `json:"prompt"`
	Password bool   `json:"password,omitempty"`
}

// InputReply answers cell ID's InputRequest: Value, or, when Error is set,
// the read fails with it.
type InputReply struct {
	ID    uint64 `json:"id"`
	Value string `json:"value"`
	Error string `json:"error,omitempty"`
}

// MaxInput bounds an InputReply's Value; the agent refuses a longer one.
const MaxInput = 1 << 20
