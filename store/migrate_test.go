package store_test

import (
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/store"
)

func TestOpenMigratesAnOlderDatabase(t *testing.T) {
	eachDialect(t, func(t *testing.T, e *env) {
		db, err := store.OpenDB(e.cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := store.MigrateTo(t.Context(), db, e.driver, 1); err != nil {
			t.Fatalf("migrating to version 1: %v", err)
		}
		if _, err := db.ExecContext(t.Context(), `INSERT INTO runs (kind, at_ms, tenant, door, template, runtime, start_kind,
			queue_ms, acquire_ms, start_ms, exec_ms, total_ms, reason, error_code, exit_code, stdout_bytes, stderr_bytes,
			code_sha256, code, session_id) VALUES ('run', 1772366400000, 'a', 'rest', 'old', '', 'pool', 0, 0, 0, 0, 7, 'ok', '', 0, 0, 0, '', '', '')`); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM schema_migrations`).Scan(&n); err != nil || n != 1 {
			t.Fatalf("versions before Open = %d, %v; want 1", n, err)
		}

		s := open(t, e.cfg)
		if err := db.QueryRowContext(t.Context(), `SELECT MAX(version) FROM schema_migrations`).Scan(&n); err != nil || n != 5 {
			t.Errorf("version after Open = %d, %v; want 5", n, err)
		}
		if got := templates(allRuns(t, s)); !equal(got, []string{"old"}) {
			t.Errorf("runs after the migration = %v, want [old]", got)
		}
		s.RecordAdminAction(store.AdminAction{Tenant: "root", Action: "list_all_sessions"}) // the table of version 2
		flush(t, s)
		if got := metric(t, e.reg, "paddock_store_written_total", "table", "admin_actions"); got != 1 {
			t.Errorf("admin actions written = %v, want 1", got)
		}
	})
}

// Version 5 adds the runs' network column: rows written before it read
// as runs without a network, and rows after it keep their policy.
func TestMigrationAddsRunNetwork(t *testing.T) {
	eachDialect(t, func(t *testing.T, e *env) {
		db, err := store.OpenDB(e.cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := store.MigrateTo(t.Context(), db, e.driver, 4); err != nil {
			t.Fatalf("migrating to version 4: %v", err)
		}
		if _, err := db.ExecContext(t.Context(), `INSERT INTO runs (kind, at_ms, tenant, door, template, runtime, start_kind,
			queue_ms, acquire_ms, start_ms, exec_ms, total_ms, reason, error_code, exit_code, stdout_bytes, stderr_bytes,
			code_sha256, code, session_id) VALUES ('run', 1772366400000, 'a', 'rest', 'old', '', 'pool', 0, 0, 0, 0, 7, 'ok', '', 0, 0, 0, '', '', '')`); err != nil {
			t.Fatal(err)
		}

		s := open(t, e.cfg)
		s.RecordRun(store.Run{Kind: store.KindRun, At: t0.Add(time.Second), Tenant: "a", Door: "rest", Template: "new",
			Reason: "ok", Network: "allow pypi.org:443; deny evil.pypi.org:80,443"})
		flush(t, s)
		got := map[string]string{}
		for _, r := range allRuns(t, s) {
			got[r.Template] = r.Network
		}
		want := map[string]string{"old": "", "new": "allow pypi.org:443; deny evil.pypi.org:80,443"}
		if !maps.Equal(got, want) {
			t.Errorf("networks by template = %q, want %q", got, want)
		}
	})
}

func TestOpenRefusesANewerDatabase(t *testing.T) {
	eachDialect(t, func(t *testing.T, e *env) {
		s := open(t, e.cfg)
		if err := s.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		db, err := store.OpenDB(e.cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.ExecContext(t.Context(), `INSERT INTO schema_migrations (version, name, applied_ms) VALUES (6, '0006_future.sql', 0)`); err != nil {
			t.Fatal(err)
		}
		_, err = store.Open(t.Context(), e.cfg)
		if !errors.Is(err, store.ErrSchemaTooNew) {
			t.Fatalf("Open = %v, want ErrSchemaTooNew", err)
		}
		if want := "the database is at version 6, this Paddock knows versions up to 5"; !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	})
}
