package wire

// Version is the protocol version the agent reports in Hello. The host
// refuses an agent with another version.
const Version = 1

// Hello is the agent's first frame: it is up and, when asked to pre-start,
// its interpreter is waiting for code.
type Hello struct {
	Version  int    `json:"version"`
	Language string `json:"language"`
	// Interpreter is the pre-started interpreter's PID inside the sandbox.
	Interpreter int `json:"interpreter_pid,omitempty"`
}

// File is written into the working directory before the program starts.
type File struct {
	Path    string `json:"path"`
	Content []byte `json:"content"`
}

// Run asks the agent to run one program.
type Run struct {
	Code      string            `json:"code"`
	Files     []File            `json:"files,omitempty"`
	Stdin     []byte            `json:"stdin,omitempty"`
	Args      []string          `json:"args,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	TimeoutMS int64             `json:"timeout_ms"`
	MaxStdout int64             `json:"max_stdout"`
	MaxStderr int64             `json:"max_stderr"`
	// Outputs are the patterns of files to return once the program is
	// over (see output.go), at most MaxOutputFiles entries whose content
	// totals at most MaxOutputBytes.
	Outputs        []string `json:"outputs,omitempty"`
	MaxOutputBytes int64    `json:"max_output_bytes,omitempty"`
	MaxOutputFiles int      `json:"max_output_files,omitempty"`
}

// Exit reports how a run ended, as the agent saw it: ExitCode, Signal and
// Reason come from the interpreter's wait status and the agent's own
// actions and readings, never from anything the program wrote. Reason uses
// the runner.Reason strings the agent can observe: ok, error, timeout,
// output_limit, killed, pids_limit, disk_limit.
type Exit struct {
	ExitCode        int    `json:"exit_code"`
	Signal          int    `json:"signal,omitempty"`
	Reason          string `json:"reason"`
	StdoutTruncated bool   `json:"stdout_truncated,omitempty"`
	StderrTruncated bool   `json:"stderr_truncated,omitempty"`
	ExecNS          int64  `json:"exec_ns"`
	// LimitsReached names the sandbox limits the agent saw at their
	// ceiling while the run ended: "processes" (the user's tasks at
	// RLIMIT_NPROC), "disk" (a writable filesystem with no space left).
	// It is read only for a run that did not exit 0.
	LimitsReached []string `json:"limits_reached,omitempty"`
}

// Fail reports that the agent could not run the request at all.
type Fail struct {
	// BadRequest is true when the request itself was at fault (a file path
	// escaping the working directory…); otherwise the agent failed.
	BadRequest bool   `json:"bad_request,omitempty"`
	Message    string `json:"message"`
	// Code and Path: writing the request's file Path failed for the
	// reason Code (one of the FileErr codes).
	Code string `json:"code,omitempty"`
	Path string `json:"path,omitempty"`
}
