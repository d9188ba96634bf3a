package mcpdoor

// The tools' inputs and outputs. Their JSON Schemas (the MCP tools' input
// and output schemas, and GET /v1/tools) are generated from these types;
// a field's jsonschema tag is its description, written for a model.

// FileIn is a file written into /workspace before a run.
type FileIn struct {
	Path    string `json:"path" jsonschema:"path relative to /workspace, e.g. data.csv or src/main.py; no .. and no leading /"`
	Content string `json:"content" jsonschema:"the file's content: text, or base64 when encoding is base64"`
	// Encoding is utf8 (the default) or base64.
	Encoding string `json:"encoding,omitempty" jsonschema:"utf8 (default) or base64, for binary files"`
}

// RunCodeIn is run_code's input. Its field names are /v1/run's, so the
// same arguments can be posted there.
type RunCodeIn struct {
	Language  string   `json:"language" jsonschema:"the language to run in"`
	Template  string   `json:"template,omitempty" jsonschema:"the template to run on, of that language; when absent the server picks one by the imports of the code (see the list below)"`
	Code      string   `json:"code" jsonschema:"the whole program; print what you want to see"`
	Files     []FileIn `json:"files,omitempty" jsonschema:"files to write into /workspace before the program starts"`
	TimeoutMS int      `json:"timeout_ms,omitempty" jsonschema:"wall-time limit in milliseconds; the template's default when absent"`
	Outputs   []string `json:"outputs,omitempty" jsonschema:"files to hand back once the program is over, as patterns relative to /workspace (path.Match syntax: * does not cross /), e.g. out/*.png; a PNG or JPEG comes back as an image"`
}

// RunCodeOut is run_code's structured result.
type RunCodeOut struct {
	Stdout          string      `json:"stdout" jsonschema:"what the program printed to standard output"`
	Stderr          string      `json:"stderr" jsonschema:"what the program printed to standard error"`
	ExitCode        int         `json:"exit_code" jsonschema:"the exit status; 0 is success"`
	Reason          string      `json:"reason" jsonschema:"how it ended: ok, error, timeout, oom, output_limit, killed, pids_limit, disk_limit or sandbox_error"`
	StdoutTruncated bool        `json:"stdout_truncated,omitempty" jsonschema:"standard output was cut at the output limit"`
	StderrTruncated bool        `json:"stderr_truncated,omitempty" jsonschema:"standard error was cut at the output limit"`
	Template        string      `json:"template" jsonschema:"the template that ran the program"`
	DurationMS      float64     `json:"duration_ms" jsonschema:"the program's run time in milliseconds"`
	Outputs         []OutputOut `json:"outputs,omitempty" jsonschema:"the files outputs matched, each returned (its content is in the result's content) or refused with a reason"`
}

// OutputOut is one entry of run_code's outputs, without its content.
type OutputOut struct {
	Pattern string `json:"pattern" jsonschema:"the pattern this entry answers"`
	Path    string `json:"path,omitempty" jsonschema:"the file, relative to /workspace; absent when the pattern matched nothing"`
	Size    int64  `json:"size,omitempty" jsonschema:"the file's size in bytes"`
	Error   string `json:"error,omitempty" jsonschema:"why the file is not returned: not_found, symlink, is_dir, not_regular, permission, too_large, too_many_files, too_many_entries or unreadable"`
	Message string `json:"message,omitempty" jsonschema:"the reason, for people"`
}

// CreateSessionIn is create_session's input.
type CreateSessionIn struct {
	Language   string `json:"language" jsonschema:"the language of the session's interpreter"`
	Template   string `json:"template,omitempty" jsonschema:"the template of that language to use; when absent the language's session template (see the list below)"`
	TTLSeconds int    `json:"ttl_s,omitempty" jsonschema:"idle seconds before the session is closed (the name /v1/sessions uses); the server's default when absent"`
}

// SessionOut describes a session.
type SessionOut struct {
	SessionID string `json:"session_id" jsonschema:"pass this to execute and the file tools"`
	Language  string `json:"language" jsonschema:"the session's language"`
	Template  string `json:"template" jsonschema:"the session's template"`
	ExpiresAt string `json:"expires_at" jsonschema:"when the session closes unless used before (RFC 3339)"`
}

// ExecuteIn is execute's input.
type ExecuteIn struct {
	SessionID string `json:"session_id" jsonschema:"the session from create_session"`
	Code      string `json:"code" jsonschema:"a cell: variables, imports and functions from earlier cells are still defined; the last expression's value is returned"`
	TimeoutMS int    `json:"timeout_ms,omitempty" jsonschema:"the cell's wall-time limit in milliseconds; the server's default when absent"`
}

// ExecuteOut is execute's structured result.
type ExecuteOut struct {
	SessionID      string     `json:"session_id" jsonschema:"the session the cell ran in"`
	ExecutionCount int        `json:"execution_count" jsonschema:"the cell's number in the session"`
	Status         string     `json:"status" jsonschema:"ok, error (the cell raised) or aborted (timeout, interrupt, output limit)"`
	Reason         string     `json:"reason" jsonschema:"why the cell ended: ok, error, timeout, output_limit, interrupted, oom or kernel_lost"`
	Stdout         string     `json:"stdout" jsonschema:"what the cell printed to standard output"`
	Stderr         string     `json:"stderr" jsonschema:"what the cell printed to standard error"`
	Result         string     `json:"result,omitempty" jsonschema:"the text of the cell's last expression's value, if any"`
	Displays       []Display  `json:"displays,omitempty" jsonschema:"rich outputs (plots, tables) in order; images are sent as image content"`
	Error          *CellError `json:"error,omitempty" jsonschema:"the exception the cell raised"`
	DurationMS     float64    `json:"duration_ms" jsonschema:"the cell's run time in milliseconds"`
	// StateLost, StateLostReason and KernelRestarted say the session's
	// kernel died or was killed, and whether it goes on with a fresh one.
	StateLost       bool   `json:"state_lost,omitempty" jsonschema:"true when the session's state is gone: its kernel died or was killed (a cell that did not stop when interrupted at its timeout, out of memory), with this cell or just before it"`
	StateLostReason string `json:"state_lost_reason,omitempty" jsonschema:"with state_lost: how the kernel died"`
	KernelRestarted bool   `json:"kernel_restarted,omitempty" jsonschema:"with state_lost: the session goes on with a fresh kernel (no variables, imports or files; counts from 1); false means the session is lost"`
	// Resumed and ResumeMS say the session was hibernated and woken for
	// this cell.
	Resumed  bool    `json:"resumed,omitempty" jsonschema:"true when the session was hibernated and was woken for this cell, its state intact"`
	ResumeMS float64 `json:"resume_ms,omitempty" jsonschema:"with resumed: how long waking took, in milliseconds"`
}

// Display is one rich output of a cell, without its bulky data.
type Display struct {
	MIMETypes []string `json:"mime_types" jsonschema:"the formats it came in, e.g. image/png and text/plain"`
	Text      string   `json:"text,omitempty" jsonschema:"its text/plain form"`
}

// CellError is an exception a cell raised.
type CellError struct {
	Name      string `json:"name" jsonschema:"the exception's type, e.g. ZeroDivisionError"`
	Value     string `json:"value" jsonschema:"its message"`
	Traceback string `json:"traceback" jsonschema:"the traceback, one frame per line"`
}

// WriteFileIn is write_file's input.
type WriteFileIn struct {
	SessionID string `json:"session_id" jsonschema:"the session from create_session"`
	Path      string `json:"path" jsonschema:"path relative to /workspace; parent directories are made"`
	Content   string `json:"content" jsonschema:"the content: text, or base64 when encoding is base64"`
	Encoding  string `json:"encoding,omitempty" jsonschema:"utf8 (default) or base64, for binary files"`
}

// FileOut says what was written.
type FileOut struct {
	Path string `json:"path" jsonschema:"the file's path relative to /workspace"`
	Size int    `json:"size" jsonschema:"its size in bytes"`
}

// ReadFileIn is read_file's input.
type ReadFileIn struct {
	SessionID string `json:"session_id" jsonschema:"the session from create_session"`
	Path      string `json:"path" jsonschema:"path relative to /workspace"`
}

// ReadFileOut is a file's content.
type ReadFileOut struct {
	Path     string `json:"path" jsonschema:"the file's path relative to /workspace"`
	Size     int    `json:"size" jsonschema:"its size in bytes"`
	Encoding string `json:"encoding" jsonschema:"utf8 when content is the text itself, base64 when the file is not valid UTF-8"`
	Content  string `json:"content" jsonschema:"the file's content"`
}

// ListFilesIn is list_files' input.
type ListFilesIn struct {
	SessionID string `json:"session_id" jsonschema:"the session from create_session"`
	Path      string `json:"path,omitempty" jsonschema:"a directory relative to /workspace; /workspace itself when absent"`
}

// ListFilesOut is a directory listing.
type ListFilesOut struct {
	Path    string  `json:"path" jsonschema:"the directory listed, relative to /workspace"`
	Entries []Entry `json:"entries" jsonschema:"its entries"`
}

// Entry is one directory entry.
type Entry struct {
	Name  string `json:"name" jsonschema:"the entry's name"`
	Size  int64  `json:"size" jsonschema:"its size in bytes"`
	IsDir bool   `json:"is_dir" jsonschema:"it is a directory"`
}

// CloseSessionIn is close_session's input.
type CloseSessionIn struct {
	SessionID string `json:"session_id" jsonschema:"the session to close"`
}

// CloseSessionOut confirms a close.
type CloseSessionOut struct {
	SessionID string `json:"session_id" jsonschema:"the session closed"`
	Closed    bool   `json:"closed" jsonschema:"always true"`
}

// SessionIDIn is the input of the tools that take only a session:
// pause_session and resume_session.
type SessionIDIn struct {
	SessionID string `json:"session_id" jsonschema:"the session from create_session or fork_session"`
}

// SessionStateOut is a session's state after pause_session or
// resume_session.
type SessionStateOut struct {
	SessionID      string  `json:"session_id" jsonschema:"the session"`
	State          string  `json:"state" jsonschema:"hibernated (saved to disk, no sandbox), idle or busy"`
	ExecutionCount int     `json:"execution_count" jsonschema:"the number of the session's last cell"`
	ImageBytes     int64   `json:"image_bytes,omitempty" jsonschema:"when hibernated: the size of its saved state on disk"`
	Resumed        bool    `json:"resumed,omitempty" jsonschema:"resume_session only: true when the session was hibernated and is now awake"`
	ResumeMS       float64 `json:"resume_ms,omitempty" jsonschema:"with resumed: how long waking took, in milliseconds"`
}

// ForkSessionIn is fork_session's input.
type ForkSessionIn struct {
	SessionID string `json:"session_id" jsonschema:"the session to copy"`
	Count     int    `json:"count" jsonschema:"how many copies to make, 1 to 100"`
}

// ForkSessionOut lists the copies fork_session made.
type ForkSessionOut struct {
	SessionID string       `json:"session_id" jsonschema:"the session copied, unchanged"`
	Sessions  []SessionOut `json:"sessions" jsonschema:"the new sessions, each with its own session_id and the copied session's variables, imports and files"`
}
