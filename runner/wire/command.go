package wire

import (
	"encoding/binary"
	"errors"
)

// Commands: in kernel mode the host may also ask for a command, a program
// with its arguments (a shell, say), to run beside the interpreter as the
// sandbox's user. The agent answers the Command with an Ack (the PID, or
// why it did not start), streams the command's output in CommandOutput
// frames tagged with the Command's ID, and ends it with one CommandEnd
// once the command has exited and its output is drained. Several commands
// may run at once, and cells meanwhile.

// Command asks for one command. Argv[0] is an absolute path or a name
// looked up on the sandbox's PATH. Dir is relative to the working
// directory ("" is the working directory itself) and may not leave it.
// Env is added to the kernel's environment. At TimeoutMS (0: none) or past
// MaxStdout or MaxStderr bytes (0: the agent's default) the agent kills the
// command's process group.
type Command struct {
	ID        uint64            `json:"id"`
	Argv      []string          `json:"argv"`
	Env       map[string]string `json:"env,omitempty"`
	Dir       string            `json:"dir,omitempty"`
	TimeoutMS int64             `json:"timeout_ms"`
	MaxStdout int64             `json:"max_stdout"`
	MaxStderr int64             `json:"max_stderr"`
}

// CommandEnd reports how command ID ended, as the agent saw it when it
// reaped the process: ExitCode (128+Signal for a signal), Signal and
// Reason ("ok", "error", "killed", "timeout", "output_limit", or
// "interrupted" when the host's CommandKill ended it) never come from
// anything the command wrote.
type CommandEnd struct {
	ID              uint64 `json:"id"`
	ExitCode        int    `json:"exit_code"`
	Signal          int    `json:"signal,omitempty"`
	Reason          string `json:"reason"`
	StdoutTruncated bool   `json:"stdout_truncated,omitempty"`
	StderrTruncated bool   `json:"stderr_truncated,omitempty"`
	ExecNS          int64  `json:"exec_ns"`
}

// CommandOutput is a chunk of a command's output. On the wire it is the
// Command's ID (8 bytes, big-endian), the stream (1 byte: 1 stdout,
// 2 stderr) and the raw bytes.
type CommandOutput struct {
	ID     uint64
	Stream byte
	Data   []byte
}

// Streams of a CommandOutput.
const (
	StreamStdout byte = 1
	StreamStderr byte = 2
)

const commandOutputHeader = 9

// ErrBadCommandOutput means a CommandOutput payload is too short or names
// an unknown stream.
var ErrBadCommandOutput = errors.New("malformed command output")

// AppendCommandOutput appends o's encoding to b.
func AppendCommandOutput(b []byte, o CommandOutput) []byte {
	b = binary.BigEndian.AppendUint64(b, o.ID)
	b = append(b, o.Stream)
	return append(b, o.Data...)
}

// ParseCommandOutput decodes a CommandOutput payload; Data aliases p.
func ParseCommandOutput(p []byte) (CommandOutput, error) {
	if len(p) < commandOutputHeader || (p[8] != StreamStdout && p[8] != StreamStderr) {
		return CommandOutput{}, ErrBadCommandOutput
	}
	return CommandOutput{ID: binary.BigEndian.Uint64(p), Stream: p[8], Data: p[commandOutputHeader:]}, nil
}
