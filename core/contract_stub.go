// Package core is, on this branch only, a stub of the door-neutral core's
// contract (/work/wt/CORE.md) so that the E2B door builds and its unit
// tests run before topic/core lands. Merging topic/core replaces it: this
// file is deleted in that merge.
package core

import (
	"context"
	"net/netip"
	"time"

	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
)

type Caller struct {
	Tenant string
	Scopes []string
	Door   string
}

const (
	ScopeRun      = "run"
	ScopeSessions = "sessions"
	ScopeAdmin    = "admin"
)

type TemplateInfo struct {
	Name        string
	Language    string
	Description string
	Versions    map[string]string
}

type File struct {
	Path    string
	Content []byte
}

type Limits struct {
	MemoryMB, Processes int
	CPUs                float64
	DiskMB, OpenFiles   int
}

type RunInput struct {
	Language       string
	Code           string
	Files          []File
	Args           []string
	Env            map[string]string
	Timeout        time.Duration
	MaxOutputBytes int64
	Limits         Limits
}

type RunResult struct {
	Template string
	pool.Outcome
}

type SessionInput struct {
	Language string
	TTL      time.Duration
	Env      map[string]string
	Limits   Limits
}

type Session struct {
	kernels.Info
	Language string
}

type ExecuteInput struct {
	Code    string
	Timeout time.Duration
	Env     map[string]string
	Queue   bool
}

type Cell struct {
	Count  int
	Code   string
	Status string
	At     time.Time
}

type Kind int

const (
	KindInternal Kind = iota
	KindInvalid
	KindUnauthenticated
	KindForbidden
	KindNotFound
	KindConflict
	KindGone
	KindTooLarge
	KindTooMany
	KindUnavailable
	KindTimeout
	KindNotImplemented
	KindCanceled
)

type Error struct {
	Kind       Kind
	Code       string
	Message    string
	RetryAfter time.Duration
}

func (e *Error) Error() string { return e.Message }

// Classify is the stub's: an *Error is itself, anything else internal.
func Classify(err error) *Error {
	if err == nil {
		return nil
	}
	if e, ok := err.(*Error); ok {
		return e
	}
	return &Error{Kind: KindInternal, Code: "internal", Message: "internal error"}
}

// Service is the stub's: every method panics. Tests use fakes.
type Service struct{}

func (s *Service) Authenticate(addr netip.Addr, token, door string) (Caller, error) { panic("stub") }
func (s *Service) AuthEnabled() bool                                                { panic("stub") }
func (s *Service) Admit(c Caller) error                                             { panic("stub") }
func (s *Service) Templates() []TemplateInfo                                        { panic("stub") }
func (s *Service) Template(language string) (TemplateInfo, error)                   { panic("stub") }
func (s *Service) Run(ctx context.Context, c Caller, in RunInput, out runner.OutputFunc) (RunResult, error) {
	panic("stub")
}
func (s *Service) CreateSession(ctx context.Context, c Caller, in SessionInput) (Session, error) {
	panic("stub")
}
func (s *Service) Session(c Caller, id string) (Session, error)                { panic("stub") }
func (s *Service) Sessions(c Caller) []Session                                 { panic("stub") }
func (s *Service) CloseSession(ctx context.Context, c Caller, id string) error { panic("stub") }
func (s *Service) SetSessionTTL(c Caller, id string, ttl time.Duration) (Session, error) {
	panic("stub")
}
func (s *Service) Execute(ctx context.Context, c Caller, id string, in ExecuteInput, events func(runner.Event)) (kernels.Execution, error) {
	panic("stub")
}
func (s *Service) Interrupt(ctx context.Context, c Caller, id string) error          { panic("stub") }
func (s *Service) Restart(ctx context.Context, c Caller, id string) (Session, error) { panic("stub") }
func (s *Service) WriteFile(ctx context.Context, c Caller, id, path string, content []byte) error {
	panic("stub")
}
func (s *Service) ReadFile(ctx context.Context, c Caller, id, path string, maxBytes int64) ([]byte, error) {
	panic("stub")
}
func (s *Service) ListFiles(ctx context.Context, c Caller, id, dir string) ([]runner.FileInfo, error) {
	panic("stub")
}
func (s *Service) History(c Caller, id string) ([]Cell, error) { panic("stub") }
