package e2bdoor

import (
	"context"
	"net/netip"
	"time"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/runner"
)

// Core is the part of *core.Service the door calls; tests give a fake.
type Core interface {
	Authenticate(addr netip.Addr, token, door string) (core.Caller, error)
	Admit(c core.Caller) error
	Template(language string) (core.TemplateInfo, error)
	TemplateOf(language, template string) (core.TemplateInfo, error)
	CreateSession(ctx context.Context, c core.Caller, in core.SessionInput) (core.Session, error)
	Session(c core.Caller, id string) (core.Session, error)
	Sessions(c core.Caller) []core.Session
	CloseSession(ctx context.Context, c core.Caller, id string) error
	SetSessionTTL(c core.Caller, id string, ttl time.Duration) (core.Session, error)
	SetSessionNetwork(c core.Caller, id string, ask *core.NetworkAsk) (core.Session, error)
	PauseSession(ctx context.Context, c core.Caller, id string) (core.Session, error)
	ResumeSession(ctx context.Context, c core.Caller, id string) (core.Session, core.Wake, error)
	ForkSession(ctx context.Context, c core.Caller, id string, count int) ([]core.Session, error)
	Execute(ctx context.Context, c core.Caller, id string, in core.ExecuteInput, events func(runner.Event)) (core.Execution, error)
	Restart(ctx context.Context, c core.Caller, id string) (core.Session, error)
	WriteFile(ctx context.Context, c core.Caller, id, path string, content []byte) error
	ReadFile(ctx context.Context, c core.Caller, id, path string, maxBytes int64) ([]byte, error)
	ListFiles(ctx context.Context, c core.Caller, id, dir string) ([]runner.FileInfo, error)
	Command(ctx context.Context, c core.Caller, id string, in core.CommandInput, out runner.OutputFunc) (runner.CommandResult, error)
	SetSessionNote(c core.Caller, id string, doc []byte) error
	SessionNotes(door string) []core.SessionNote
}

var _ Core = (*core.Service)(nil)
