package mcpdoor

import (
	"context"
	"net/netip"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/runner"
)

// Core is the part of the door-neutral core the MCP door calls.
// *core.Service implements it; the door's unit tests use a fake.
type Core interface {
	AuthenticateWith(addr netip.Addr, door string, token func() (string, error)) (core.Caller, error)
	AuthEnabled() bool
	AdmitQuota(c core.Caller) (core.Quota, error)
	HoldConnection(c core.Caller) (release func(), err error)
	Templates() []core.TemplateInfo

	Run(ctx context.Context, c core.Caller, in core.RunInput, out runner.OutputFunc) (core.RunResult, error)

	CreateSession(ctx context.Context, c core.Caller, in core.SessionInput) (core.Session, error)
	CloseSession(ctx context.Context, c core.Caller, id string) error
	Execute(ctx context.Context, c core.Caller, id string, in core.ExecuteInput, events func(runner.Event)) (core.Execution, error)
	WriteFile(ctx context.Context, c core.Caller, id, path string, content []byte) error
	ReadFile(ctx context.Context, c core.Caller, id, path string, maxBytes int64) ([]byte, error)
	ListFiles(ctx context.Context, c core.Caller, id, dir string) ([]runner.FileInfo, error)

	PauseSession(ctx context.Context, c core.Caller, id string) (core.Session, error)
	ResumeSession(ctx context.Context, c core.Caller, id string) (core.Session, core.Wake, error)
	ForkSession(ctx context.Context, c core.Caller, id string, count int) ([]core.Session, error)
}

var _ Core = (*core.Service)(nil)
