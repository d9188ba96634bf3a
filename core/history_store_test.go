package core_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/store"
)

// withHistory is a fixture whose core records into a real SQLite store.
func withHistory(t *testing.T, cfg core.Config) (*fixture, *store.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "h.db")
	st, err := store.Open(t.Context(), store.Config{DSN: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(context.Background()); err != nil {
			t.Errorf("closing the store: %v", err)
		}
	})
	cfg.Store = st
	return newFixture(t, cfg), st, path
}

func runsOf(t *testing.T, svc *core.Service, st *store.Store, c core.Caller, q core.HistoryQuery, f store.RunFilter) []store.Run {
	t.Helper()
	if err := st.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	page, err := svc.RunHistory(t.Context(), c, q, f)
	if err != nil {
		t.Fatalf("RunHistory(%+v, %+v): %v", c, q, err)
	}
	return page.Runs
}

func TestHistoryRecordsRunsCellsAndSessions(t *testing.T) {
	f, st, _ := withHistory(t, core.Config{Auth: core.Auth{HS256Secret: secret}})
	alice := core.Caller{Tenant: "alice", Scopes: []string{core.ScopeRun, core.ScopeSessions}, Door: "rest"}
	bob := core.Caller{Tenant: "bob", Scopes: []string{core.ScopeRun, core.ScopeSessions}, Door: "mcp"}
	admin := core.Caller{Tenant: "ops", Scopes: []string{core.ScopeAdmin}, Door: "graphql"}

	if _, err := f.svc.Run(t.Context(), alice, core.RunInput{Language: "python", Code: "hello"}, nil); err != nil {
		t.Fatal(err)
	}
	// A run whose caller is gone before it starts: recorded with the
	// core's code and no reason.
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := f.svc.Run(gone, bob, core.RunInput{Language: "node", Code: "x"}, nil); err == nil {
		t.Fatal("a run on a canceled context succeeded")
	}
	// A request its checks refuse is not a run.
	if _, err := f.svc.Run(t.Context(), alice, core.RunInput{Language: "python"}, nil); err == nil {
		t.Fatal("empty code accepted")
	}

	s, err := f.svc.CreateSession(t.Context(), alice, core.SessionInput{Language: "python"})
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range []string{"print 42", "eprint oops\nraise ValueError: no"} {
		if _, err := f.svc.Execute(t.Context(), alice, s.ID, core.ExecuteInput{Code: code}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.svc.CloseSession(t.Context(), alice, s.ID); err != nil {
		t.Fatal(err)
	}

	mine := runsOf(t, f.svc, st, alice, core.HistoryQuery{}, store.RunFilter{})
	if len(mine) != 3 {
		t.Fatalf("alice's rows: %+v, want a run and two cells", mine)
	}
	run, ok, bad := mine[2], mine[1], mine[0] // newest first
	h := sha256.Sum256([]byte("hello"))
	if run.Kind != store.KindRun || run.Reason != "ok" || run.Door != "rest" || run.Template != "python" ||
		run.StdoutBytes != 5 || run.CodeSHA256 != hex.EncodeToString(h[:]) || run.Code != "" || run.StartKind == "" {
		t.Errorf("run row %+v", run)
	}
	if ok.Kind != store.KindCell || ok.SessionID != s.ID || ok.Reason != "ok" || ok.StdoutBytes != 3 || ok.StartKind != "kernel" {
		t.Errorf("first cell %+v", ok)
	}
	if bad.Reason != "error" || bad.StderrBytes != 5 || bad.StdoutBytes != 0 {
		t.Errorf("failing cell %+v", bad)
	}

	bobs := runsOf(t, f.svc, st, bob, core.HistoryQuery{}, store.RunFilter{})
	if len(bobs) != 1 || bobs[0].Error != "client_closed_request" || bobs[0].Reason != "" || bobs[0].Door != "mcp" {
		t.Errorf("bob's rows %+v, want his canceled run alone", bobs)
	}
	for _, q := range []core.HistoryQuery{{All: true}, {Tenant: "alice"}} {
		_, err := f.svc.RunHistory(t.Context(), bob, q, store.RunFilter{})
		checkErr(t, "bob reading others' history", err, core.KindForbidden, "insufficient_scope")
	}
	if all := runsOf(t, f.svc, st, admin, core.HistoryQuery{All: true}, store.RunFilter{}); len(all) != 4 {
		t.Errorf("the operator sees %d rows, want 4", len(all))
	}
	if only := runsOf(t, f.svc, st, admin, core.HistoryQuery{All: true, Tenant: "bob"}, store.RunFilter{}); len(only) != 1 {
		t.Errorf("the operator narrowed to bob sees %d rows, want 1", len(only))
	}

	ev, err := f.svc.SessionEventHistory(t.Context(), alice, core.HistoryQuery{}, store.EventFilter{SessionID: s.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.Events) != 2 || ev.Events[0].Event != store.EventDeleted || ev.Events[1].Event != store.EventCreated {
		t.Errorf("session events %+v, want deleted then created (newest first)", ev.Events)
	}
	agg, err := f.svc.RunAggregates(t.Context(), admin, core.HistoryQuery{All: true}, store.AggregateFilter{Since: t0.Add(-time.Second), Until: t0.Add(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if len(agg) != 1 || agg[0].Template != "python" || agg[0].Count != 1 {
		t.Errorf("aggregates %+v, want alice's one python run (bob's never ran)", agg)
	}

	_, err = f.svc.RunHistory(t.Context(), alice, core.HistoryQuery{}, store.RunFilter{Cursor: "not-a-cursor"})
	checkErr(t, "a forged cursor", err, core.KindInvalid, "invalid_cursor")
}

func TestHistoryAuthFailuresAndSessionEnds(t *testing.T) {
	f, st, path := withHistory(t, core.Config{Auth: core.Auth{HS256Secret: secret}})
	if _, err := f.svc.Authenticate(peer, "junk", "e2b"); err == nil {
		t.Fatal("a junk token was accepted")
	}
	end := core.SessionEndRecorder(st, f.clock.Now)
	end("alice", "s1", "python", "expired")
	end("alice", "s2", "node", "lost: its kernel died")
	if err := st.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	alice := core.Caller{Tenant: "alice", Scopes: []string{core.ScopeSessions}}
	ev, err := f.svc.SessionEventHistory(t.Context(), alice, core.HistoryQuery{}, store.EventFilter{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range ev.Events {
		got[e.SessionID] = e.Event + ": " + e.Detail
	}
	if got["s1"] != "expired: expired" || got["s2"] != "lost: its kernel died" {
		t.Errorf("session end events %q", got)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM auth_failures WHERE door = 'e2b' AND reason = 'invalid_token' AND client = '192.0.2.7/32'").Scan(&n); err != nil || n != 1 {
		t.Errorf("auth failures recorded: %d (%v), want 1", n, err)
	}
	if core.SessionEndRecorder(nil, nil) != nil {
		t.Error("a recorder with no store")
	}
}

func TestHistoryOff(t *testing.T) {
	f := newFixture(t, core.Config{})
	if f.svc.HistoryEnabled() {
		t.Fatal("history enabled with no store")
	}
	if _, err := f.svc.Run(t.Context(), core.Caller{}, core.RunInput{Language: "python", Code: "x"}, nil); err != nil {
		t.Fatalf("a run without history: %v", err)
	}
	_, err := f.svc.RunHistory(t.Context(), core.Caller{}, core.HistoryQuery{}, store.RunFilter{})
	checkErr(t, "history off", err, core.KindNotImplemented, "history_off")
}
