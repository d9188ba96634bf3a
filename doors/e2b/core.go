package e2bdoor

import (
	"context"
	"net/netip"
	"time"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/runner"
)

// Core is the part of *core.Service the door calls; tests give a fake.
type Core interface {
	Authenticate(addr netip.Addr, token, door string) (core.Caller, error)
	Admit(c core.Caller) error
	Template(language string) (core.TemplateInfo, error)
	CreateSession(ctx context.Context, c core.Caller, in core.SessionInput) (core.Session, error)
	Session(c core.Caller, id string) (core.Session, error)
	CloseSession(ctx context.Context, c core.Caller, id string) error
	SetSessionTTL(c core.Caller, id string, ttl time.Duration) (core.Session, error)
	Execute(ctx context.Context, c core.Caller, id string, in core.ExecuteInput, events func(runner.Event)) (kernels.Execution, error)
	Restart(ctx context.Context, c core.Caller, id string) (core.Session, error)
	WriteFile(ctx context.Context, c core.Caller, id, path string, content []byte) error
	ReadFile(ctx context.Context, c core.Caller, id, path string, maxBytes int64) ([]byte, error)
	ListFiles(ctx context.Context, c core.Caller, id, dir string) ([]runner.FileInfo, error)
}

var _ Core = (*core.Service)(nil)

// Command is one shell command for a session's sandbox.
type Command struct {
	Cmd  string            // the program, e.g. "/bin/bash"
	Args []string          // its arguments
	Env  map[string]string // added to the environment
	Dir  string            // working directory relative to /workspace; "" is /workspace
}

// CommandResult is how a command ended.
type CommandResult struct {
	ExitCode int
	// Status describes the end in words ("exit status 1", "timeout").
	Status string
}

// Commander runs shell commands in a session's sandbox. Until the core
// offers it, the door answers Process/Start with "unimplemented".
type Commander interface {
	Command(ctx context.Context, c core.Caller, id string, cmd Command, out func(runner.Stream, []byte)) (CommandResult, error)
}
