package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/store"
)

// history is every run and cell of the server's history that f selects,
// newest first, read as an operator would (all tenants), once the queue
// is written.
func (e *e2e) history(t *testing.T, f store.RunFilter) []store.Run {
	t.Helper()
	if e.st.History == nil {
		t.Fatal("the server keeps no history")
	}
	if err := e.st.History.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	f.Limit = store.MaxPageSize
	page, err := e.st.Core.RunHistory(t.Context(), core.Caller{Scopes: []string{core.ScopeAdmin}}, core.HistoryQuery{All: true}, f)
	if err != nil {
		t.Fatal(err)
	}
	return page.Runs
}

// lastRun is the newest one-shot run in the history.
func (e *e2e) lastRun(t *testing.T) store.Run {
	t.Helper()
	runs := e.history(t, store.RunFilter{Kind: store.KindRun})
	if len(runs) == 0 {
		t.Fatal("no run in the history")
	}
	return runs[0]
}

// call sends one JSON request with a bearer token ("" for none).
func (e *e2e) call(t *testing.T, method, path, token string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, e.srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

func sha(code string) string {
	h := sha256.Sum256([]byte(code))
	return hex.EncodeToString(h[:])
}

// Every run and cell through REST is in the history as its trusted side
// saw it: reason, exit code, template, runtime, start kind, phase
// timings, output sizes and the code's hash (not the code: it is off by
// default); a session's life is in its events; a bad token is an auth
// failure; tenants see only their own rows. The other doors' rows are
// checked in their own tests (TestE2EMCP, TestE2BSDK, TestE2EJupyter),
// the limits' reasons in TestE2ERunLimits.
func TestE2EHistory(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte(strings.Repeat("history-secret-", 3)), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newE2EWith(t, "--jwt-hs256-secret-file="+secret)
	alice := mintToken(t, secret, "alice")

	runs := []struct {
		name, lang, code, reason string
		exit                     int
		extra                    map[string]any
		stdout                   int64
	}{
		{"ok", "python", "print(6*7)", "ok", 0, nil, 3},
		{"error", "python", "import sys; print('x', file=sys.stderr); sys.exit(3)", "error", 3, nil, 0},
		{"timeout", "python", "while True: pass", "timeout", -1, map[string]any{"timeout_ms": 1000}, 0},
		{"output limit", "node", "process.stdout.write('y'.repeat(1 << 16))", "output_limit", -1, map[string]any{"max_output_bytes": 1024}, 1024},
	}
	for _, tc := range runs {
		t.Run(tc.name, func(t *testing.T) {
			body := map[string]any{"language": tc.lang, "code": tc.code}
			for k, v := range tc.extra {
				body[k] = v
			}
			status, raw := e.call(t, "POST", "/v1/run", alice, body)
			var r struct {
				ExitCode int    `json:"exit_code"`
				Reason   string `json:"reason"`
				Start    string `json:"start"`
				Template string `json:"template"`
			}
			if err := json.Unmarshal(raw, &r); err != nil || status != http.StatusOK || r.Reason != tc.reason {
				t.Fatalf("HTTP %d %s (want reason %s)", status, raw, tc.reason)
			}
			h := e.lastRun(t)
			t.Logf("history row: %+v", h)
			if h.Tenant != "alice" || h.Door != "rest" || h.Reason != tc.reason || h.ExitCode != r.ExitCode ||
				h.Template != r.Template || h.Runtime != e.cfg.Runtime || h.StartKind != r.Start || h.Error != "" {
				t.Errorf("row %+v does not match the answer %+v (tenant alice, door rest)", h, r)
			}
			if tc.exit >= 0 && h.ExitCode != tc.exit {
				t.Errorf("exit code %d, want %d", h.ExitCode, tc.exit)
			}
			if h.CodeSHA256 != sha(tc.code) || h.Code != "" {
				t.Errorf("code hash %q code %q, want the hash of the code and no code", h.CodeSHA256, h.Code)
			}
			if h.StdoutBytes != tc.stdout || h.TotalMS < h.ExecMS || h.TotalMS <= 0 {
				t.Errorf("stdout bytes %d (want %d), total %d ms, exec %d ms", h.StdoutBytes, tc.stdout, h.TotalMS, h.ExecMS)
			}
		})
	}

	t.Run("refused run", func(t *testing.T) {
		// Valid, but over the server's cap: refused before any sandbox.
		before := e.lastRun(t)
		status, raw := e.call(t, "POST", "/v1/run", alice, map[string]any{"language": "python", "code": "1", "timeout_ms": 10 << 20})
		if status != http.StatusBadRequest {
			t.Fatalf("HTTP %d %s, want 400", status, raw)
		}
		if h := e.lastRun(t); h.ID != before.ID {
			t.Errorf("a request refused by its checks is not a run, yet the newest row is %+v", h)
		}
	})

	t.Run("session", func(t *testing.T) {
		status, raw := e.call(t, "POST", "/v1/sessions", alice, map[string]any{"language": "python"})
		var s struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(raw, &s); err != nil || status != http.StatusCreated {
			t.Fatalf("create: HTTP %d %s", status, raw)
		}
		for _, code := range []string{"x = 41", "print(x + 1)", "1/0"} {
			if status, raw := e.call(t, "POST", "/v1/sessions/"+s.ID+"/execute", alice, map[string]any{"code": code}); status != http.StatusOK {
				t.Fatalf("execute %q: HTTP %d %s", code, status, raw)
			}
		}
		if status, raw := e.call(t, "DELETE", "/v1/sessions/"+s.ID, alice, nil); status != http.StatusNoContent {
			t.Fatalf("delete: HTTP %d %s", status, raw)
		}
		cells := e.history(t, store.RunFilter{Kind: store.KindCell, SessionID: s.ID})
		if len(cells) != 3 {
			t.Fatalf("%d cells in the history, want 3: %+v", len(cells), cells)
		}
		want := []string{"error", "ok", "ok"} // newest first
		for i, c := range cells {
			if c.Reason != want[i] || c.Tenant != "alice" || c.Door != "rest" || c.Template != "python" || c.StartKind != "kernel" {
				t.Errorf("cell %d: %+v, want reason %s", i, c, want[i])
			}
		}
		if cells[1].StdoutBytes != 3 || cells[2].StdoutBytes != 0 {
			t.Errorf("cell stdout sizes %d and %d, want 3 (\"42\\n\") and 0", cells[1].StdoutBytes, cells[2].StdoutBytes)
		}
		ev, err := e.st.Core.SessionEventHistory(t.Context(), core.Caller{Tenant: "alice", Scopes: []string{core.ScopeSessions}},
			core.HistoryQuery{}, store.EventFilter{SessionID: s.ID})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, x := range ev.Events {
			got = append(got, x.Event)
		}
		if strings.Join(got, ",") != "deleted,created" {
			t.Errorf("session events %q, want deleted,created", got)
		}
	})

	t.Run("tenants", func(t *testing.T) {
		bobCaller := core.Caller{Tenant: "bob", Scopes: []string{core.ScopeRun, core.ScopeSessions}}
		page, err := e.st.Core.RunHistory(t.Context(), bobCaller, core.HistoryQuery{}, store.RunFilter{})
		if err != nil || len(page.Runs) != 0 {
			t.Errorf("bob sees %d rows (%v), want none of alice's", len(page.Runs), err)
		}
		for _, q := range []core.HistoryQuery{{All: true}, {Tenant: "alice"}} {
			_, err := e.st.Core.RunHistory(t.Context(), bobCaller, q, store.RunFilter{})
			if ce := core.Classify(err); err == nil || ce.Code != "insufficient_scope" {
				t.Errorf("bob asking for %+v: %v, want insufficient_scope", q, err)
			}
		}
		aliceRuns, err := e.st.Core.RunHistory(t.Context(), core.Caller{Tenant: "alice", Scopes: []string{core.ScopeRun}}, core.HistoryQuery{}, store.RunFilter{})
		if err != nil || len(aliceRuns.Runs) < len(runs) {
			t.Errorf("alice sees %d rows (%v), want at least %d", len(aliceRuns.Runs), err, len(runs))
		}
	})

	t.Run("auth failure", func(t *testing.T) {
		if status, raw := e.call(t, "POST", "/v1/run", "not-a-token", map[string]any{"language": "python", "code": "1"}); status != http.StatusUnauthorized {
			t.Fatalf("HTTP %d %s, want 401", status, raw)
		}
		if err := e.st.History.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		n := countRows(t, filepath.Join(e.cfg.StateDir, "history.db"), "SELECT COUNT(*) FROM auth_failures WHERE door = 'rest' AND reason = 'invalid_token'")
		if n != 1 {
			t.Errorf("%d auth failures recorded, want 1", n)
		}
	})
}

// countRows runs a COUNT query on the SQLite history file at path.
func countRows(t *testing.T, path, query string) int {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)") // the server writes meanwhile
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(t.Context(), query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A history database that breaks under a running server costs no run:
// runs answer as before, and /metrics counts the records lost and the
// write errors (the log line is the store's own test's).
func TestE2EHistoryBrokenDatabase(t *testing.T) {
	e := newE2E(t)
	if code, r := e.post(t, map[string]any{"language": "python", "code": "print(1)"}); code != http.StatusOK || r.Stdout != "1\n" {
		t.Fatalf("HTTP %d %+v", code, r)
	}
	if len(e.history(t, store.RunFilter{})) != 1 {
		t.Fatal("the first run is not in the history")
	}
	// Break it: the runs table goes, as a damaged database file would.
	db, err := sql.Open("sqlite", filepath.Join(e.cfg.StateDir, "history.db")+"?_pragma=busy_timeout(10000)") // the server writes meanwhile
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(context.Background(), "DROP TABLE runs"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for i := range 3 {
		if code, r := e.post(t, map[string]any{"language": "python", "code": "print(2)"}); code != http.StatusOK || r.Stdout != "2\n" {
			t.Fatalf("run %d with the database broken: HTTP %d %+v", i, code, r)
		}
	}
	if err := e.st.History.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	m := e.metrics(t)
	if !strings.Contains(m, `paddock_store_dropped_total{reason="write_error"} 3`) {
		t.Errorf("/metrics lacks 3 records dropped on write errors:\n%s", grepLines(m, "paddock_store_"))
	}
	if !strings.Contains(m, "paddock_store_write_errors_total") {
		t.Errorf("/metrics lacks the write errors:\n%s", grepLines(m, "paddock_store_"))
	}
	if _, err := e.st.Core.RunHistory(t.Context(), core.Caller{}, core.HistoryQuery{}, store.RunFilter{}); core.Classify(err).Code != "history_unavailable" {
		t.Errorf("a query of the broken history: %v, want history_unavailable", err)
	}
}

// expectDoorRows checks that door's runs or cells are in the history,
// tenant's, each with the reason it ended with, and that reasons holds
// among them.
func (e *e2e) expectDoorRows(t *testing.T, door string, kind store.Kind, tenant string, reasons ...string) {
	t.Helper()
	rows := e.history(t, store.RunFilter{Kind: kind, Door: door})
	if len(rows) == 0 {
		t.Fatalf("no %s rows from the %s door in the history", kind, door)
	}
	seen := map[string]bool{}
	for _, r := range rows {
		seen[r.Reason] = true
		if r.Tenant != tenant || r.Template == "" || (r.Reason == "") == (r.Error == "") || r.CodeSHA256 == "" {
			t.Errorf("%s row %+v: want tenant %q, a template, a reason or an error code, a code hash", door, r, tenant)
		}
	}
	for _, want := range reasons {
		if !seen[want] {
			t.Errorf("no %s row from the %s door ended %q; reasons seen: %v", kind, door, want, seen)
		}
	}
}
