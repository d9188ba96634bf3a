package agent

import (
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/paddock-dev/paddock/runner/wire"
)

// Reasons the agent can observe, spelled as runner.Reason spells them.
const (
	reasonOK          = "ok"
	reasonError       = "error"
	reasonTimeout     = "timeout"
	reasonOutputLimit = "output_limit"
	reasonKilled      = "killed"
)

// ender records why the agent ended a run; the first reason wins. Every
// end kills all user processes.
type ender struct {
	kill   func()
	mu     sync.Mutex
	reason string
}

func (e *ender) end(reason string) {
	e.mu.Lock()
	if e.reason == "" {
		e.reason = reason
	}
	e.mu.Unlock()
	e.kill()
}

func (e *ender) why() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.reason
}

// exitFrame describes a run that ended with ws. agentReason, when set, is
// why the agent ended it and takes precedence.
func exitFrame(ws syscall.WaitStatus, agentReason string, out, errOut pumpResult, exec time.Duration) wire.Exit {
	e := wire.Exit{
		StdoutTruncated: out.truncated,
		StderrTruncated: errOut.truncated,
		ExecNS:          exec.Nanoseconds(),
	}
	switch {
	case ws.Signaled():
		e.Signal = int(ws.Signal())
		e.ExitCode = 128 + e.Signal
		e.Reason = reasonKilled
	case ws.ExitStatus() == 0:
		e.Reason = reasonOK
	default:
		e.ExitCode = ws.ExitStatus()
		e.Reason = reasonError
	}
	if agentReason != "" {
		e.Reason = agentReason
	}
	return e
}

// describeStatus says how a process ended, for messages.
func describeStatus(ws syscall.WaitStatus) string {
	if ws.Signaled() {
		return fmt.Sprintf("killed by signal %d (%s)", int(ws.Signal()), ws.Signal())
	}
	return fmt.Sprintf("exit status %d", ws.ExitStatus())
}
