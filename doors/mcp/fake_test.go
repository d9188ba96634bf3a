package mcpdoor

import (
	"context"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/runner"
)

// fakeCore is a hand-written Core: tokens are tenant names ("" refused
// when auth is on), hooks shape the answers, and it records calls.
type fakeCore struct {
	auth bool

	run     func(core.Caller, core.RunInput) (core.RunResult, error)
	execute func(id string, in core.ExecuteInput, events func(runner.Event)) (kernels.Execution, error)
	read    func(id, path string) ([]byte, error)

	mu      sync.Mutex
	callers []core.Caller   // every caller a work call saw
	created []string        // sessions created, in order
	ttls    []time.Duration // their TTLs as the core got them
	closed  map[string]bool // sessions closed
	admits  int
	closes  chan string // receives each closed session's id, when not nil
}

var _ Core = (*fakeCore)(nil)

func (f *fakeCore) saw(c core.Caller) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.callers = append(f.callers, c)
}

func (f *fakeCore) AuthenticateWith(_ netip.Addr, door string, tokenOf func() (string, error)) (core.Caller, error) {
	if !f.auth {
		return core.Caller{Door: door}, nil
	}
	token, err := tokenOf()
	if err != nil {
		return core.Caller{}, &core.Error{Kind: core.KindUnauthenticated, Code: "invalid_token", Message: err.Error()}
	}
	if token == "bad" {
		return core.Caller{}, &core.Error{Kind: core.KindUnauthenticated, Code: "invalid_token", Message: "token signature is invalid"}
	}
	return core.Caller{Tenant: token, Scopes: []string{core.ScopeRun, core.ScopeSessions}, Door: door}, nil
}

func (f *fakeCore) AuthEnabled() bool { return f.auth }

func (f *fakeCore) AdmitQuota(core.Caller) (core.Quota, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.admits++
	return core.Quota{Limit: 20, Remaining: 20 - f.admits, Reset: 1500 * time.Millisecond}, nil
}

func (f *fakeCore) Templates() []core.TemplateInfo {
	return []core.TemplateInfo{
		{Template: core.Template{Name: "python", Language: "python", Versions: map[string]string{"python": "3.11.2", "numpy": "1.24.2"},
			Limits: core.TemplateLimits{MemoryMB: 512, CPUs: 1, Processes: 64, DiskMB: 256, TimeoutMS: 10000}}},
		{Template: core.Template{Name: "node", Language: "node", Versions: map[string]string{"node": "18.19.0"},
			Limits: core.TemplateLimits{MemoryMB: 256, CPUs: 1, Processes: 64, DiskMB: 256, TimeoutMS: 10000}}},
	}
}

func (f *fakeCore) Run(_ context.Context, c core.Caller, in core.RunInput, _ runner.OutputFunc) (core.RunResult, error) {
	f.saw(c)
	return f.run(c, in)
}

func (f *fakeCore) CreateSession(_ context.Context, c core.Caller, in core.SessionInput) (core.Session, error) {
	f.saw(c)
	f.mu.Lock()
	defer f.mu.Unlock()
	id := "s" + string(rune('0'+len(f.created)))
	f.created = append(f.created, id)
	f.ttls = append(f.ttls, in.TTL)
	return core.Session{Info: kernels.Info{ID: id, Owner: c.Tenant, Template: in.Language}, Language: in.Language}, nil
}

func (f *fakeCore) CloseSession(_ context.Context, c core.Caller, id string) error {
	f.saw(c)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed == nil {
		f.closed = map[string]bool{}
	}
	f.closed[id] = true
	if f.closes != nil {
		f.closes <- id
	}
	return nil
}

func (f *fakeCore) Execute(_ context.Context, c core.Caller, id string, in core.ExecuteInput, events func(runner.Event)) (kernels.Execution, error) {
	f.saw(c)
	return f.execute(id, in, events)
}

func (f *fakeCore) WriteFile(_ context.Context, c core.Caller, id, path string, content []byte) error {
	f.saw(c)
	return nil
}

func (f *fakeCore) ReadFile(_ context.Context, c core.Caller, id, path string, maxBytes int64) ([]byte, error) {
	f.saw(c)
	return f.read(id, path)
}

func (f *fakeCore) ListFiles(_ context.Context, c core.Caller, id, dir string) ([]runner.FileInfo, error) {
	f.saw(c)
	return []runner.FileInfo{{Name: "a.txt", Size: 3}}, nil
}

// awaitClosed waits for the core to be asked to close session id next,
// with a safety net far above the milliseconds it takes.
func awaitClosed(t *testing.T, f *fakeCore, id string) {
	t.Helper()
	select {
	case got := <-f.closes:
		if got != id {
			t.Fatalf("closed %s, want %s", got, id)
		}
	case <-time.After(time.Minute):
		t.Fatalf("%s not closed after a minute", id)
	}
}
