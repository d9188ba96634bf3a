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
	fork    func(id string, count int) ([]core.Session, error) // nil: count children s<n>, as created

	// maxConns caps each tenant's held connections, as the core's
	// TenantMaxConnections; 0 is no limit.
	maxConns int

	mu      sync.Mutex
	callers []core.Caller     // every caller a work call saw
	created []string          // sessions created, in order
	ttls    []time.Duration   // their TTLs as the core got them
	closed  map[string]bool   // sessions closed
	owners  map[string]string // each created or forked session's tenant
	asleep  map[string]bool   // sessions paused and not yet woken
	admits  int
	closes  chan string    // receives each closed session's id, when not nil
	held    map[string]int // connections held, by tenant
	freed   chan string    // receives the tenant of each released hold, when not nil (never blocks)
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

func (f *fakeCore) HoldConnection(c core.Caller) (func(), error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.held == nil {
		f.held = map[string]int{}
	}
	if f.maxConns > 0 && f.held[c.Tenant] >= f.maxConns {
		return nil, &core.Error{Kind: core.KindTooMany, Code: "too_many_connections",
			Message: "you hold 2 connections", RetryAfter: 5 * time.Second}
	}
	f.held[c.Tenant]++
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			f.held[c.Tenant]--
			f.mu.Unlock()
			select {
			case f.freed <- c.Tenant:
			default:
			}
		})
	}, nil
}

// holding is how many connections tenant holds.
func (f *fakeCore) holding(tenant string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.held[tenant]
}

// awaitHolding waits until tenant holds want connections, checking after
// each release, with a safety net far above the milliseconds it takes.
func awaitHolding(t *testing.T, f *fakeCore, tenant string, want int) {
	t.Helper()
	deadline := time.After(time.Minute)
	for f.holding(tenant) != want {
		select {
		case <-f.freed:
		case <-deadline:
			t.Fatalf("%q holds %d connections after a minute, want %d", tenant, f.holding(tenant), want)
		}
	}
}

func (f *fakeCore) Templates() []core.TemplateInfo {
	return []core.TemplateInfo{
		{Template: core.Template{Name: "python", Language: "python", Versions: map[string]string{"python": "3.11.2", "numpy": "1.24.2"},
			Limits:      core.TemplateLimits{MemoryMB: 512, CPUs: 1, Processes: 64, DiskMB: 256, TimeoutMS: 10000},
			WarmImports: []string{"numpy", "pandas"}, DefaultFor: []string{"sessions"}}},
		{Template: core.Template{Name: "python-slim", Language: "python", Versions: map[string]string{"python": "3.11.2", "numpy": "1.24.2"},
			Limits:     core.TemplateLimits{MemoryMB: 512, CPUs: 1, Processes: 64, DiskMB: 256, TimeoutMS: 10000},
			DefaultFor: []string{"runs"}}},
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
	f.ttls = append(f.ttls, in.TTL)
	return f.newSessionLocked(c, in.Language), nil
}

func (f *fakeCore) newSessionLocked(c core.Caller, lang string) core.Session {
	id := "s" + string(rune('0'+len(f.created)))
	f.created = append(f.created, id)
	if f.owners == nil {
		f.owners = map[string]string{}
	}
	f.owners[id] = c.Tenant
	return core.Session{Info: kernels.Info{ID: id, Owner: c.Tenant, Template: lang, State: core.SessionIdle}, Language: lang}
}

// ownedLocked is the caller's session id, as the core finds it: another
// tenant's, or one never made, is not found.
func (f *fakeCore) ownedLocked(c core.Caller, id string) (core.Session, error) {
	if owner, ok := f.owners[id]; !ok || owner != c.Tenant {
		return core.Session{}, &core.Error{Kind: core.KindNotFound, Code: "session_not_found", Message: "session " + id + " not found"}
	}
	s := core.Session{Info: kernels.Info{ID: id, Owner: c.Tenant, Template: "python", State: core.SessionIdle, ExecutionCount: 1}, Language: "python"}
	if f.asleep[id] {
		s.State, s.ImageBytes = "hibernated", 4096
	}
	return s, nil
}

func (f *fakeCore) PauseSession(_ context.Context, c core.Caller, id string) (core.Session, error) {
	f.saw(c)
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.ownedLocked(c, id); err != nil {
		return core.Session{}, err
	}
	if f.asleep == nil {
		f.asleep = map[string]bool{}
	}
	f.asleep[id] = true
	return f.ownedLocked(c, id)
}

func (f *fakeCore) ResumeSession(_ context.Context, c core.Caller, id string) (core.Session, core.Wake, error) {
	f.saw(c)
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.ownedLocked(c, id); err != nil {
		return core.Session{}, core.Wake{}, err
	}
	var w core.Wake
	if f.asleep[id] {
		w = core.Wake{Resumed: true, Took: 1250 * time.Microsecond}
		delete(f.asleep, id)
	}
	s, err := f.ownedLocked(c, id)
	return s, w, err
}

func (f *fakeCore) ForkSession(_ context.Context, c core.Caller, id string, count int) ([]core.Session, error) {
	f.saw(c)
	if f.fork != nil {
		return f.fork(id, count)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.ownedLocked(c, id); err != nil {
		return nil, err
	}
	var out []core.Session
	for range count {
		out = append(out, f.newSessionLocked(c, "python"))
	}
	return out, nil
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
