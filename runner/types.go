package runner

import "time"

// Spec describes the sandbox a Runtime should start.
type Spec struct {
	// Template is the template name, used for labels and logs.
	Template string
	// Language selects the in-sandbox driver: "python" or "node".
	Language string
	// Rootfs is the host path of the template's root filesystem. The
	// runtime never writes to it.
	Rootfs string
	// RootfsID identifies the root filesystem's content (one build of
	// it), so that a snapshot taken on an older build is not restored on
	// a newer one. Empty when unknown.
	RootfsID string
	// Warmup is code the pre-started interpreter runs before it waits for
	// the request (for example imports). Empty means none.
	Warmup string
	// Limits bound the whole sandbox.
	Limits Limits
	// Labels are recorded with the sandbox (instance id, template).
	Labels map[string]string
	// Background says that nobody waits for this start or restore: a
	// pool's refill. A runtime may bring the sandbox up at the host's
	// lowest CPU weight, so that it uses only CPU that runs and live
	// cells leave idle; it returns the sandbox at the weight of any other
	// (a one-shot run's), so whoever takes it later runs at full weight.
	// It is no part of what a snapshot image depends on.
	Background bool
	// Network gives the sandbox one network interface whose only peer is
	// a listener on the host side (see Egress); false leaves it loopback
	// only. A snapshot depends on it.
	Network bool
}

// Limits bound one sandbox. Zero values mean the runtime's defaults.
type Limits struct {
	// MemoryBytes caps the sandbox's memory (host memory cgroup); a
	// runtime may size a language's own heap below it.
	MemoryBytes int64
	// Processes caps the user's processes and threads inside the sandbox.
	Processes int
	// CPUs caps CPU time as a number of cores (0.5 = half a core).
	CPUs float64
	// DiskBytes caps the writable layer above the read-only rootfs and
	// each writable tmpfs (/tmp, /dev/shm).
	DiskBytes int64
	// OpenFiles caps open file descriptors per process.
	OpenFiles int
}

// Stream names an output stream of the user's program.
type Stream string

const (
	Stdout Stream = "stdout"
	Stderr Stream = "stderr"
)

// File is a file written into the sandbox's working directory before the
// program starts. Path is relative to the working directory.
type File struct {
	Path    string
	Content []byte
}

// RunRequest is one program execution.
type RunRequest struct {
	Code  string
	Files []File
	// Stdin is delivered to the program, then closed. Nil means an empty
	// stdin (reads see EOF at once).
	Stdin []byte
	Args  []string
	Env   map[string]string
	// Timeout is the wall-time limit, measured on the host.
	Timeout time.Duration
	// MaxStdout and MaxStderr cap each stream in bytes. The run is ended
	// with ReasonOutputLimit when either is exceeded.
	MaxStdout int64
	MaxStderr int64
	// Outputs are patterns (path.Match syntax, relative to the working
	// directory) naming files to return once the program is over, in
	// RunResult.Outputs. Empty means none.
	Outputs []string
	// MaxOutputBytes caps the content of all returned files together;
	// MaxOutputFiles caps the entries of RunResult.Outputs. Both are
	// enforced on the host, whatever the sandbox sends.
	MaxOutputBytes int64
	MaxOutputFiles int
}

// Reason says why a run ended.
type Reason string

const (
	ReasonOK           Reason = "ok"            // exited 0
	ReasonError        Reason = "error"         // exited non-zero
	ReasonTimeout      Reason = "timeout"       // wall-time limit reached
	ReasonOOM          Reason = "oom"           // memory limit reached (the cgroup's, or a runtime heap sized to it)
	ReasonOutputLimit  Reason = "output_limit"  // a stream exceeded its cap
	ReasonKilled       Reason = "killed"        // killed by a signal Paddock did not send
	ReasonPidsLimit    Reason = "pids_limit"    // died of a process start the process limit refused
	ReasonDiskLimit    Reason = "disk_limit"    // died of a write a full writable filesystem refused
	ReasonSandboxError Reason = "sandbox_error" // the sandbox died for another reason
)

// RunResult is the outcome of a run. Stdout and Stderr hold at most the
// requested caps.
type RunResult struct {
	Stdout          []byte
	Stderr          []byte
	ExitCode        int
	Reason          Reason
	StdoutTruncated bool
	StderrTruncated bool
	// Exec is the time from delivering the request to the program's end,
	// measured on the host.
	Exec time.Duration
	// LimitsReached names the sandbox limits the agent saw at their
	// ceiling as a run that did not exit 0 ended, whether or not they
	// changed its reason: LimitProcesses, LimitDisk.
	LimitsReached []string
	// Outputs answers RunRequest.Outputs: per pattern, in order, each
	// file it matched (listed once, under the first pattern that matched
	// it) in lexical order, or the pattern's own error. OutputsTruncated
	// is set when a cap left something out (see OutputError.Truncated).
	Outputs          []Output
	OutputsTruncated bool
}

// Limits a run can be seen at the ceiling of (RunResult.LimitsReached).
const (
	LimitProcesses = "processes" // the user's tasks at the process limit
	LimitDisk      = "disk"      // a writable filesystem with no space left
)
