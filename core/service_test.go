package core_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
)

func intp(v int) *int { return &v }

func TestTemplate(t *testing.T) {
	f := newFixture(t, core.Config{})
	tmpl, err := f.svc.Template("node")
	if err != nil || tmpl.Name != "node" || tmpl.Language != "node" || tmpl.Versions == nil {
		t.Errorf("Template(node) = %+v, %v", tmpl, err)
	}
	_, err = f.svc.Template("ruby")
	if e := checkErr(t, "ruby", err, core.KindInvalid, "unknown_language"); e.Message != `unknown language "ruby" (known: node, python)` {
		t.Errorf("message %q", e.Message)
	}
	_, err = f.svc.Template("")
	if e := checkErr(t, "no language", err, core.KindInvalid, "invalid_request"); e.Message != "language is required (one of: node, python)" {
		t.Errorf("message %q", e.Message)
	}
	if got := f.svc.Languages(); !slices.Equal(got, []string{"node", "python"}) {
		t.Errorf("Languages = %v", got)
	}
}

func TestRun(t *testing.T) {
	f := newFixture(t, core.Config{})
	var reqs []runner.RunRequest
	f.rt.RunFunc = func(_ context.Context, req runner.RunRequest, out runner.OutputFunc) (runner.RunResult, error) {
		reqs = append(reqs, req)
		out(runner.Stdout, []byte(req.Code))
		return runner.RunResult{Stdout: []byte(req.Code), Reason: runner.ReasonOK}, nil
	}
	c := core.Caller{Tenant: "alice", Door: "mcp"}
	var streamed strings.Builder
	res, err := f.svc.Run(t.Context(), c, core.RunInput{Language: "python", Code: "print(1)",
		Files: []core.File{{Path: "a/b.txt", Content: []byte("aGk="), Encoding: "base64"}}}, func(_ runner.Stream, b []byte) {
		streamed.Write(b)
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Template != "python" || res.SandboxID == "" || res.Kind != pool.StartCold || string(res.Result.Stdout) != "print(1)" {
		t.Errorf("result = %+v", res)
	}
	if streamed.String() != "print(1)" {
		t.Errorf("streamed %q", streamed.String())
	}
	if len(reqs) != 1 || reqs[0].Timeout != 30*time.Second || reqs[0].MaxStdout != core.DefaultMaxOutputBytes ||
		len(reqs[0].Files) != 1 || string(reqs[0].Files[0].Content) != "hi" {
		t.Errorf("runner request = %+v", reqs)
	}
	if got := calls(t, f.svc, "mcp", "run", "ok"); got != 1 {
		t.Errorf("mcp runs counted = %g, want 1", got)
	}
}

func TestRunRefusals(t *testing.T) {
	f := newFixture(t, core.Config{Auth: core.Auth{HS256Secret: secret}, MaxMemoryMB: 1024})
	sessionsOnly := core.Caller{Tenant: "alice", Scopes: []string{"sessions"}, Door: "mcp"}
	caller := core.Caller{Tenant: "alice", Scopes: []string{"run"}, Door: "mcp"}
	ok := core.RunInput{Language: "python", Code: "x"}
	with := func(edit func(*core.RunInput)) core.RunInput {
		in := ok
		edit(&in)
		return in
	}
	tests := []struct {
		name   string
		caller core.Caller
		in     core.RunInput
		kind   core.Kind
		code   string
		msg    string
	}{
		{"scope", sessionsOnly, ok, core.KindForbidden, "insufficient_scope", `this token does not grant the "run" scope this route needs`},
		{"empty code", caller, with(func(in *core.RunInput) { in.Code = "" }), core.KindInvalid, "invalid_request", "code must not be empty"},
		{"timeout over", caller, with(func(in *core.RunInput) { in.Timeout = time.Minute + time.Millisecond }),
			core.KindInvalid, "invalid_request", "timeout_ms must be between 1 and 60000, or 0 for the default (30000); got 60001"},
		{"sub-millisecond timeout over", caller, with(func(in *core.RunInput) { in.Timeout = time.Minute + time.Microsecond }),
			core.KindInvalid, "invalid_request", "timeout_ms must be between 1 and 60000, or 0 for the default (30000); got 60001"},
		{"negative output cap", caller, with(func(in *core.RunInput) { in.MaxOutputBytes = -1 }),
			core.KindInvalid, "invalid_request", "max_output_bytes must be between 1 and 1048576, or 0 for the default; got -1"},
		{"path", caller, with(func(in *core.RunInput) { in.Files = []core.File{{Path: "../x"}} }),
			core.KindInvalid, "invalid_path", `files[0].path must not contain ".." components`},
		{"encoding", caller, with(func(in *core.RunInput) { in.Files = []core.File{{Path: "x", Encoding: "hex"}} }),
			core.KindInvalid, "invalid_request", `files[0].encoding must be "utf8" or "base64", got "hex"`},
		{"arg", caller, with(func(in *core.RunInput) { in.Args = []string{"\x00"} }),
			core.KindInvalid, "invalid_request", "args[0] must not contain a NUL byte"},
		{"env", caller, with(func(in *core.RunInput) { in.Env = map[string]string{"A=B": ""} }),
			core.KindInvalid, "invalid_request", `env key "A=B" must not contain '='`},
		{"memory", caller, with(func(in *core.RunInput) { in.Limits.MemoryMB = intp(0) }),
			core.KindInvalid, "invalid_request", "limits.memory_mb must be between 64 and 1024 (MiB); got 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.svc.Run(t.Context(), tc.caller, tc.in, nil)
			if e := checkErr(t, "Run", err, tc.kind, tc.code); e.Message != tc.msg {
				t.Errorf("message %q\nwant    %q", e.Message, tc.msg)
			}
			if _, err := f.svc.CheckRun(tc.caller, tc.in); err == nil || err.Error() != tc.msg {
				t.Errorf("CheckRun: %v, want %q", err, tc.msg)
			}
		})
	}
	if n := len(f.rt.Sandboxes()); n != 0 {
		t.Errorf("refused runs started %d sandboxes", n)
	}
	if got := calls(t, f.svc, "mcp", "run", "invalid_request"); got != 8 {
		t.Errorf("invalid runs counted = %g, want 8", got)
	}
}

// A tenant's runs in flight are limited whichever door they come
// through; other tenants are not affected.
func TestRunTenantLimit(t *testing.T) {
	f := newFixture(t, core.Config{TenantMaxRuns: 1, TenantRunQueue: -1})
	release := make(chan struct{})
	started := make(chan struct{})
	go func() {
		_, _ = f.svc.Run(context.Background(), core.Caller{Tenant: "alice", Door: "rest"}, core.RunInput{Language: "python", Code: "x"},
			func(runner.Stream, []byte) { close(started); <-release })
	}()
	<-started
	_, err := f.svc.Run(t.Context(), core.Caller{Tenant: "alice", Door: "mcp"}, core.RunInput{Language: "python", Code: "x"}, nil)
	e := checkErr(t, "second run", err, core.KindTooMany, "too_many_runs")
	if e.RetryAfter != time.Second || !errors.Is(err, core.ErrTooManyRuns) {
		t.Errorf("refusal = %+v", e)
	}
	if _, err := f.svc.Run(t.Context(), core.Caller{Tenant: "bob"}, core.RunInput{Language: "python", Code: "x"}, nil); err != nil {
		t.Errorf("another tenant's run: %v", err)
	}
	close(release)
}

func TestSessions(t *testing.T) {
	f := newFixture(t, core.Config{})
	alice := core.Caller{Tenant: "alice", Door: "e2b"}
	bob := core.Caller{Tenant: "bob", Door: "mcp"}
	s, err := f.svc.CreateSession(t.Context(), alice, core.SessionInput{Language: "python", TTL: 90 * time.Second})
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	if s.Owner != "alice" || s.Language != "python" || s.Template != "python" || s.TTL != 90*time.Second {
		t.Errorf("session = %+v", s)
	}
	for i, code := range []string{"x = 41", "x"} {
		var out []runner.Event
		x, err := f.svc.Execute(t.Context(), alice, s.ID, core.ExecuteInput{Code: code}, func(e runner.Event) { out = append(out, e) })
		if err != nil || x.ExecutionCount != i+1 || x.Status != runner.StatusOK {
			t.Fatalf("Execute %q: %+v, %v", code, x, err)
		}
		if i == 1 && (len(out) != 1 || out[0].Data["text/plain"] != "41") {
			t.Errorf("events of %q: %+v", code, out)
		}
	}
	if _, err := f.svc.Execute(t.Context(), alice, s.ID, core.ExecuteInput{Code: "raise ValueError: no"}, nil); err != nil {
		t.Fatalf("failing cell: %v", err)
	}
	cells, err := f.svc.History(alice, s.ID)
	if err != nil {
		t.Fatalf("History: %v", err)
	}
	want := []core.Cell{{1, "x = 41", "ok", t0}, {2, "x", "ok", t0}, {3, "raise ValueError: no", "error", t0}}
	if !slices.Equal(cells, want) {
		t.Errorf("History = %+v\nwant      %+v", cells, want)
	}

	// Another tenant sees nothing of it, whichever door.
	if _, err := f.svc.Session(bob, s.ID); err == nil {
		t.Error("bob got alice's session")
	}
	_, err = f.svc.Execute(t.Context(), bob, s.ID, core.ExecuteInput{Code: "x"}, nil)
	checkErr(t, "bob's execute", err, core.KindNotFound, "session_not_found")
	_, err = f.svc.History(bob, s.ID)
	checkErr(t, "bob's history", err, core.KindNotFound, "session_not_found")
	if got := f.svc.Sessions(bob); len(got) != 0 {
		t.Errorf("bob's sessions = %+v", got)
	}
	if got := f.svc.Sessions(alice); len(got) != 1 || got[0].ID != s.ID {
		t.Errorf("alice's sessions = %+v", got)
	}
	checkErr(t, "bob's close", f.svc.CloseSession(t.Context(), bob, s.ID), core.KindNotFound, "session_not_found")

	// Files round-trip.
	if err := f.svc.WriteFile(t.Context(), alice, s.ID, "d/f.txt", []byte("hi")); err != nil {
		t.Fatalf("WriteFile: %v", err)
	}
	if data, err := f.svc.ReadFile(t.Context(), alice, s.ID, "d/f.txt", 0); err != nil || string(data) != "hi" {
		t.Errorf("ReadFile = %q, %v", data, err)
	}
	if list, err := f.svc.ListFiles(t.Context(), alice, s.ID, "d"); err != nil || len(list) != 1 || list[0].Name != "f.txt" {
		t.Errorf("ListFiles = %+v, %v", list, err)
	}
	err = f.svc.WriteFile(t.Context(), alice, s.ID, "/etc/passwd", nil)
	checkErr(t, "absolute path", err, core.KindInvalid, "invalid_path")

	// SetSessionTTL: the new TTL counts from now.
	f.clock.Advance(time.Minute)
	got, err := f.svc.SetSessionTTL(alice, s.ID, 10*time.Minute)
	if err != nil || got.TTL != 10*time.Minute || !got.ExpiresAt.Equal(t0.Add(11*time.Minute)) {
		t.Errorf("SetSessionTTL = %+v, %v; want TTL 10m expiring at %s", got, err, t0.Add(11*time.Minute))
	}
	_, err = f.svc.SetSessionTTL(alice, s.ID, 2*time.Hour)
	if e := checkErr(t, "TTL over the maximum", err, core.KindInvalid, "invalid_request"); e.Message != "ttl_s must be between 1 and 3600, or 0 for the default (900); got 7200" {
		t.Errorf("message %q", e.Message)
	}
	_, err = f.svc.SetSessionTTL(bob, s.ID, time.Minute)
	checkErr(t, "bob's TTL", err, core.KindNotFound, "session_not_found")

	if err := f.svc.CloseSession(t.Context(), alice, s.ID); err != nil {
		t.Fatalf("CloseSession: %v", err)
	}
	_, err = f.svc.History(alice, s.ID)
	checkErr(t, "history after close", err, core.KindNotFound, "session_not_found")
	if got := calls(t, f.svc, "e2b", "execute", "ok"); got != 3 {
		t.Errorf("e2b executes counted = %g, want 3", got)
	}
}

// History keeps the last cells of a session, each cut to a bound.
func TestHistoryBounded(t *testing.T) {
	f := newFixture(t, core.Config{})
	c := core.Caller{Door: "mcp"}
	s, err := f.svc.CreateSession(t.Context(), c, core.SessionInput{Language: "python"})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("é", 5000) // 10000 bytes
	for i := range 105 {
		code := fmt.Sprintf("print %d", i)
		if i == 104 {
			code = long
		}
		if _, err := f.svc.Execute(t.Context(), c, s.ID, core.ExecuteInput{Code: code}, nil); err != nil {
			t.Fatal(err)
		}
	}
	cells, err := f.svc.History(c, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 100 || cells[0].Code != "print 5" || cells[0].Count != 6 {
		t.Fatalf("History: %d cells, first %+v; want 100 from print 5", len(cells), cells[0])
	}
	if last := cells[99].Code; len(last) != 8192 || last != long[:8192] {
		t.Errorf("long cell kept as %d bytes, want its first 8192", len(last))
	}
}

func TestSessionLimits(t *testing.T) {
	f := newFixture(t, core.Config{TenantMaxSessions: 1})
	alice := core.Caller{Tenant: "alice", Door: "mcp"}
	if _, err := f.svc.CreateSession(t.Context(), alice, core.SessionInput{Language: "node"}); err != nil {
		t.Fatal(err)
	}
	_, err := f.svc.CreateSession(t.Context(), alice, core.SessionInput{Language: "node"})
	e := checkErr(t, "second session", err, core.KindTooMany, "too_many_sessions")
	if e.Message != "you hold 1 sessions, the most one tenant may; delete one (or let one expire) and retry" || e.RetryAfter != kernels.DefaultReapInterval {
		t.Errorf("refusal = %+v", e)
	}
	_, err = f.svc.CreateSession(t.Context(), alice, core.SessionInput{Language: "node", TTL: -time.Second})
	checkErr(t, "negative TTL", err, core.KindInvalid, "invalid_request")
	_, err = f.svc.Execute(t.Context(), alice, "nope", core.ExecuteInput{}, nil)
	if e := checkErr(t, "empty cell", err, core.KindInvalid, "invalid_request"); e.Message != "code must not be empty" {
		t.Errorf("message %q", e.Message)
	}
}

func TestSessionsDisabled(t *testing.T) {
	f := newFixture(t, core.Config{})
	svc, err := core.New(core.Config{Pool: f.svc.Config().Pool})
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.CreateSession(t.Context(), core.Caller{}, core.SessionInput{Language: "python"})
	if e := checkErr(t, "create", err, core.KindNotImplemented, "not_implemented"); e.Message != "sessions are not enabled on this server" {
		t.Errorf("message %q", e.Message)
	}
	if svc.SessionsEnabled() || !f.svc.SessionsEnabled() {
		t.Error("SessionsEnabled wrong")
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		err  error
		kind core.Kind
		code string
	}{
		{kernels.ErrSessionNotFound, core.KindNotFound, "session_not_found"},
		{fmt.Errorf("x: %w", kernels.ErrBusy), core.KindConflict, "busy"},
		{kernels.ErrSessionLost, core.KindGone, "session_lost"},
		{&pool.SaturatedError{Template: "python", RetryAfter: 3 * time.Second}, core.KindUnavailable, "saturated"},
		{pool.ErrClosed, core.KindUnavailable, "unavailable"},
		{&pool.UnavailableError{Template: "node"}, core.KindUnavailable, "template_building"},
		{&pool.UnavailableError{Template: "node", Failed: true}, core.KindUnavailable, "template_unavailable"},
		{&runner.FileError{Op: runner.FileRead, Path: "a", Kind: runner.FileNoSpace, Detail: "secret"}, core.KindTooLarge, "disk_full"},
		{context.Canceled, core.KindCanceled, "client_closed_request"},
		{runner.ErrNotSupported, core.KindNotImplemented, "not_implemented"},
		{errors.New("disk on fire"), core.KindInternal, "internal"},
	}
	for _, tc := range tests {
		e := core.Classify(tc.err)
		if e.Kind != tc.kind || e.Code != tc.code || !errors.Is(e, tc.err) || strings.Contains(e.Message, "secret") || strings.Contains(e.Message, "fire") {
			t.Errorf("Classify(%v) = %+v, want %s %s", tc.err, e, tc.kind, tc.code)
		}
	}
	if core.Classify(nil) != nil {
		t.Error("Classify(nil) is not nil")
	}
}

// The pool's saturation reaches every door as 503-class KindUnavailable
// with the pool's retry delay.
func TestClassifySaturated(t *testing.T) {
	err := fmt.Errorf("running: %w", &pool.SaturatedError{Template: "python", Waited: 5 * time.Second, RetryAfter: 7 * time.Second})
	e := core.Classify(err)
	want := "the server is saturated: no sandbox was free within the queue deadline; retry after 7 s"
	if e.Kind != core.KindUnavailable || e.Code != "saturated" || e.RetryAfter != 7*time.Second || e.Message != want {
		t.Errorf("Classify = %v %q %v %q, want unavailable saturated 7s %q", e.Kind, e.Code, e.RetryAfter, e.Message, want)
	}
}

// A template whose root filesystem is still being built is refused with
// a retry delay and the way to find one that serves; one whose build
// failed, with no delay.
func TestClassifyTemplateUnavailable(t *testing.T) {
	e := core.Classify(fmt.Errorf("running: %w", &pool.UnavailableError{Template: "node"}))
	want := "the node template's root filesystem is still being built, as on a server's first start; retry after 10 s (GET /readyz names the templates that serve now)"
	if e.Code != "template_building" || e.RetryAfter != 10*time.Second || e.Message != want {
		t.Errorf("Classify = %q %v %q, want template_building 10s %q", e.Code, e.RetryAfter, e.Message, want)
	}
	e = core.Classify(&pool.UnavailableError{Template: "node", Failed: true})
	want = "the node template's root filesystem could not be built (the server's log says why); the other templates still serve"
	if e.Code != "template_unavailable" || e.RetryAfter != 0 || e.Message != want {
		t.Errorf("Classify = %q %v %q, want template_unavailable %q", e.Code, e.RetryAfter, e.Message, want)
	}
}

// At its limit a tenant's next run waits for a slot instead of being
// refused, shows in paddock_tenant_runs_waiting, runs once the slot
// frees, and reports the wait as queue time.
func TestRunTenantQueue(t *testing.T) {
	f := newFixture(t, core.Config{TenantMaxRuns: 1})
	release := make(chan struct{})
	started := make(chan struct{})
	go func() {
		_, _ = f.svc.Run(context.Background(), core.Caller{Tenant: "alice", Door: "rest"}, core.RunInput{Language: "python", Code: "x"},
			func(runner.Stream, []byte) { close(started); <-release })
	}()
	<-started
	type answer struct {
		res core.RunResult
		err error
	}
	second := make(chan answer, 1)
	go func() {
		res, err := f.svc.Run(t.Context(), core.Caller{Tenant: "alice", Door: "mcp"}, core.RunInput{Language: "python", Code: "x"}, nil)
		second <- answer{res, err}
	}()
	for deadline := time.Now().Add(time.Minute); gaugeOf(t, f.svc, "paddock_tenant_runs_waiting") != 1; time.Sleep(time.Millisecond) { // a safety net only
		if time.Now().After(deadline) {
			t.Fatal("the second run never showed as waiting")
		}
	}
	select {
	case a := <-second:
		t.Fatalf("the second run ended while the first held the slot: %+v, %v", a.res, a.err)
	default:
	}
	close(release)
	a := <-second
	if a.err != nil {
		t.Fatalf("the waiting run: %v", a.err)
	}
	if a.res.Outcome.Timing.Queue <= 0 || a.res.Outcome.Timing.Total < a.res.Outcome.Timing.Queue {
		t.Errorf("timing %+v, want the wait in queue and total", a.res.Outcome.Timing)
	}
	if g := gaugeOf(t, f.svc, "paddock_tenant_runs_waiting"); g != 0 {
		t.Errorf("paddock_tenant_runs_waiting = %g after the run, want 0", g)
	}
}
