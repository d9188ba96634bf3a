package e2bdoor

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/runner"
)

// fakeCore is a hand-written Core: tokens are tenant names, sessions live
// in a map, files in a map per session, and Execute replays ExecuteFunc.
type fakeCore struct {
	mu       sync.Mutex
	next     int
	sessions map[string]*fakeSession
	admitted map[string]int
	// ExecuteFunc answers a cell; nil echoes the code as stdout.
	ExecuteFunc func(id, code string, events func(runner.Event)) (kernels.Execution, error)
	// CommandFunc answers a command; commands records every one.
	CommandFunc func(in core.CommandInput, out runner.OutputFunc) (runner.CommandResult, error)
	commands    []core.CommandInput
	// AdmitErr refuses every request when set.
	AdmitErr error
	// BeforeCreate, when set, runs as CreateSession begins.
	BeforeCreate func()
	// NoHibernation makes pause, resume and fork answer hibernation_off;
	// PauseErr, when set, is every pause's answer.
	NoHibernation bool
	PauseErr      error
	// wakes counts the hibernated sessions woken, by resume or a call.
	wakes int
}

type fakeSession struct {
	note     []byte // SetSessionNote's
	info     core.Session
	language string
	env      map[string]string
	files    map[string][]byte
	// sleepAtExpiry is the create's HibernateAtExpiry.
	sleepAtExpiry bool
}

func newFakeCore() *fakeCore {
	return &fakeCore{sessions: map[string]*fakeSession{}, admitted: map[string]int{}}
}

func (f *fakeCore) Authenticate(_ netip.Addr, token, _ string) (core.Caller, error) {
	if token == "" || strings.HasPrefix(token, "bad") {
		return core.Caller{}, &core.Error{Kind: core.KindUnauthenticated, Code: "unauthenticated", Message: "invalid token"}
	}
	if tenant, ok := strings.CutSuffix(token, "+run-only"); ok {
		return core.Caller{Tenant: tenant, Scopes: []string{core.ScopeRun}, Door: "e2b"}, nil
	}
	return core.Caller{Tenant: token, Scopes: []string{core.ScopeRun, core.ScopeSessions}, Door: "e2b"}, nil
}

// scopeErr is the core's refusal of a caller without the sessions scope.
func scopeErr(c core.Caller) error {
	if slices.Contains(c.Scopes, core.ScopeSessions) {
		return nil
	}
	return &core.Error{Kind: core.KindForbidden, Code: "forbidden", Message: `the token lacks the "sessions" scope`}
}

func (f *fakeCore) Admit(c core.Caller) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.admitted[c.Tenant]++
	return f.AdmitErr
}

func (f *fakeCore) Template(language string) (core.TemplateInfo, error) {
	switch language {
	case "python":
		return core.TemplateInfo{Template: core.Template{Name: "python", Language: "python",
			Limits: core.TemplateLimits{MemoryMB: 1024, CPUs: 1, DiskMB: 512}}}, nil
	case "node", "javascript":
		return core.TemplateInfo{Template: core.Template{Name: "node", Language: "node",
			Limits: core.TemplateLimits{MemoryMB: 512, CPUs: 1, DiskMB: 256}}}, nil
	}
	return core.TemplateInfo{}, &core.Error{Kind: core.KindInvalid, Code: "unknown_language",
		Message: fmt.Sprintf("unknown language or template %q (have: node, python)", language)}
}

func (f *fakeCore) TemplateOf(language, template string) (core.TemplateInfo, error) {
	if template == "" {
		return f.Template(language)
	}
	if template == "python-slim" && (language == "" || language == "python") {
		return core.TemplateInfo{Template: core.Template{Name: "python-slim", Language: "python",
			Limits: core.TemplateLimits{MemoryMB: 1024, CPUs: 1, DiskMB: 512}}}, nil
	}
	return core.TemplateInfo{}, &core.Error{Kind: core.KindInvalid, Code: "unknown_template", Message: fmt.Sprintf("unknown template %q", template)}
}

func (f *fakeCore) CreateSession(_ context.Context, c core.Caller, in core.SessionInput) (core.Session, error) {
	if f.BeforeCreate != nil {
		f.BeforeCreate()
	}
	if in.TTL > time.Hour {
		return core.Session{}, &core.Error{Kind: core.KindInvalid, Code: "invalid_ttl", Message: "ttl_s must be at most 3600"}
	}
	if in.HibernateAtExpiry && f.NoHibernation {
		return core.Session{}, errHibernationOff
	}
	for k := range in.Env {
		if strings.Contains(k, "=") {
			return core.Session{}, &core.Error{Kind: core.KindInvalid, Code: "invalid_request", Message: fmt.Sprintf("env key %q must not contain '='", k)}
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next++
	now := time.Date(2026, 12, 1, 12, 0, f.next, 0, time.UTC)
	template := in.Template
	if template == "" {
		template = in.Language
	}
	s := core.Session{Info: kernels.Info{ID: fmt.Sprintf("s%02d", f.next), Owner: c.Tenant, Template: template,
		CreatedAt: now, ExpiresAt: now.Add(in.TTL), TTL: in.TTL, State: kernels.StateIdle}, Language: in.Language}
	f.sessions[s.ID] = &fakeSession{info: s, language: in.Language, env: in.Env, files: map[string][]byte{}, sleepAtExpiry: in.HibernateAtExpiry}
	return s, nil
}

func (f *fakeCore) lookup(c core.Caller, id string) (*fakeSession, error) {
	if err := scopeErr(c); err != nil {
		return nil, err
	}
	s, ok := f.sessions[id]
	if !ok || s.info.Owner != c.Tenant {
		return nil, &core.Error{Kind: core.KindNotFound, Code: "session_not_found", Message: "session " + id + " not found"}
	}
	return s, nil
}

func (f *fakeCore) Session(c core.Caller, id string) (core.Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, err := f.lookup(c, id)
	if err != nil {
		return core.Session{}, err
	}
	return s.info, nil
}

func (f *fakeCore) Sessions(c core.Caller) []core.Session {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []core.Session{}
	if scopeErr(c) != nil {
		return out
	}
	for _, s := range f.sessions {
		if s.info.Owner == c.Tenant {
			out = append(out, s.info)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (f *fakeCore) live() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ids []string
	for id := range f.sessions {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func (f *fakeCore) CloseSession(_ context.Context, c core.Caller, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.lookup(c, id); err != nil {
		return err
	}
	delete(f.sessions, id)
	return nil
}

func (f *fakeCore) SetSessionNetwork(c core.Caller, id string, ask *core.NetworkAsk) (core.Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, err := f.lookup(c, id)
	if err != nil {
		return core.Session{}, err
	}
	return s.info, nil
}

func (f *fakeCore) SetSessionTTL(c core.Caller, id string, ttl time.Duration) (core.Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, err := f.lookup(c, id)
	if err != nil {
		return core.Session{}, err
	}
	if ttl > time.Hour {
		return core.Session{}, &core.Error{Kind: core.KindInvalid, Code: "invalid_ttl", Message: "ttl_s must be at most 3600"}
	}
	s.info.TTL = ttl
	s.info.ExpiresAt = s.info.CreatedAt.Add(ttl)
	return s.info, nil
}

func (f *fakeCore) Execute(_ context.Context, c core.Caller, id string, in core.ExecuteInput, events func(runner.Event)) (kernels.Execution, error) {
	f.mu.Lock()
	_, err := f.lookupAwake(c, id)
	fn := f.ExecuteFunc
	f.mu.Unlock()
	if err != nil {
		return kernels.Execution{}, err
	}
	if fn != nil {
		return fn(id, in.Code, events)
	}
	events(runner.Event{Type: runner.EventStream, Stream: runner.Stdout, Text: in.Code + "\n"})
	return kernels.Execution{ExecuteResult: runner.ExecuteResult{ExecutionCount: 1, Status: runner.StatusOK, Reason: runner.ReasonOK}}, nil
}

func (f *fakeCore) Restart(_ context.Context, c core.Caller, id string) (core.Session, error) {
	return f.Session(c, id)
}

func (f *fakeCore) WriteFile(_ context.Context, c core.Caller, id, path string, content []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, err := f.lookup(c, id)
	if err != nil {
		return err
	}
	s.files[path] = append([]byte(nil), content...)
	return nil
}

func (f *fakeCore) ReadFile(_ context.Context, c core.Caller, id, path string, maxBytes int64) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, err := f.lookup(c, id)
	if err != nil {
		return nil, err
	}
	b, ok := s.files[path]
	if !ok {
		return nil, &core.Error{Kind: core.KindNotFound, Code: "file_not_found", Message: "file " + path + " not found"}
	}
	return b, nil
}

// ListFiles lists the flat map: entries directly under dir, with
// directories implied by deeper paths.
func (f *fakeCore) ListFiles(_ context.Context, c core.Caller, id, dir string) ([]runner.FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, err := f.lookup(c, id)
	if err != nil {
		return nil, err
	}
	prefix := ""
	if dir != "." && dir != "" {
		prefix = dir + "/"
	}
	seen := map[string]runner.FileInfo{}
	for p, b := range s.files {
		rest, ok := strings.CutPrefix(p, prefix)
		if !ok {
			continue
		}
		name, _, deeper := strings.Cut(rest, "/")
		if deeper {
			seen[name] = runner.FileInfo{Name: name, IsDir: true, Mode: "drwxr-xr-x"}
		} else {
			seen[name] = runner.FileInfo{Name: name, Size: int64(len(b)), Mode: "-rw-r--r--",
				MTime: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
		}
	}
	if len(seen) == 0 && prefix != "" {
		return nil, &core.Error{Kind: core.KindNotFound, Code: "file_not_found", Message: "directory " + dir + " not found"}
	}
	var out []runner.FileInfo
	for _, fi := range seen {
		out = append(out, fi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (f *fakeCore) Command(_ context.Context, c core.Caller, id string, in core.CommandInput, out runner.OutputFunc) (runner.CommandResult, error) {
	f.mu.Lock()
	_, err := f.lookup(c, id)
	f.commands = append(f.commands, in)
	fn := f.CommandFunc
	f.mu.Unlock()
	if err != nil {
		return runner.CommandResult{}, err
	}
	return fn(in, out)
}

var core429 = core.Error{Kind: core.KindTooMany, Code: "rate_limited", Message: "too many requests", RetryAfter: 1500 * time.Millisecond}

func (f *fakeCore) SetSessionNote(c core.Caller, id string, doc []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, err := f.lookup(c, id)
	if err != nil {
		return err
	}
	s.note = append([]byte(nil), doc...)
	return nil
}

func (f *fakeCore) SessionNotes(door string) []core.SessionNote {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []core.SessionNote
	for id, s := range f.sessions {
		if len(s.note) > 0 {
			out = append(out, core.SessionNote{SessionID: id, Owner: s.info.Owner, Door: door, Doc: s.note})
		}
	}
	return out
}
