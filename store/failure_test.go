package store_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/store"
)

// holdWriter makes cfg's writer stop before each batch until release or
// until Close cancels its writes; entered receives once per batch held.
func holdWriter(cfg store.Config) (_ store.Config, entered <-chan struct{}, release func()) {
	in, gate := make(chan struct{}, 1), make(chan struct{})
	cfg = store.WithBeforeWrite(cfg, func(ctx context.Context) {
		select {
		case in <- struct{}{}:
		default:
		}
		select {
		case <-gate:
		case <-ctx.Done():
		}
	})
	return cfg, in, func() { close(gate) }
}

func TestFullQueueDropsAndCounts(t *testing.T) {
	eachDialect(t, func(t *testing.T, e *env) {
		cfg, entered, release := holdWriter(e.cfg)
		cfg.QueueSize = 4
		s := open(t, cfg)
		s.RecordRun(store.Run{Kind: store.KindRun, Template: "first"})
		<-entered // the writer holds the first record, the queue is empty
		for range 4 + 3 {
			s.RecordRun(store.Run{Kind: store.KindRun}) // never blocks: the writer is stuck
		}
		if got := metric(t, e.reg, "paddock_store_queue_length", "", ""); got != 4 {
			t.Errorf("queue length = %v, want 4", got)
		}
		if got := metric(t, e.reg, "paddock_store_dropped_total", "reason", "queue_full"); got != 3 {
			t.Errorf("dropped{queue_full} = %v, want 3", got)
		}
		release()
		flush(t, s)
		if got := metric(t, e.reg, "paddock_store_written_total", "table", "runs"); got != 5 {
			t.Errorf("written = %v, want 5", got)
		}
		if got := metric(t, e.reg, "paddock_store_queue_length", "", ""); got != 0 {
			t.Errorf("queue length after the flush = %v, want 0", got)
		}
	})
}

func TestBrokenDatabaseLogsAndCounts(t *testing.T) {
	eachDialect(t, func(t *testing.T, e *env) {
		s := open(t, e.cfg)
		// Someone drops the runs table under the running store.
		db, err := store.OpenDB(e.cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.ExecContext(t.Context(), `DROP TABLE runs`); err != nil {
			t.Fatal(err)
		}

		s.RecordRun(store.Run{Kind: store.KindRun})
		flush(t, s)
		s.RecordRun(store.Run{Kind: store.KindRun})
		flush(t, s) // within a minute of the first line: not logged
		if got := metric(t, e.reg, "paddock_store_dropped_total", "reason", "write_error"); got != 2 {
			t.Errorf("dropped{write_error} = %v, want 2", got)
		}
		if got := metric(t, e.reg, "paddock_store_write_errors_total", "", ""); got != 2 {
			t.Errorf("write errors = %v, want 2", got)
		}
		logs := e.log.String()
		if n := strings.Count(logs, "history database writing records failed"); n != 1 {
			t.Errorf("%d error lines, want 1 within the minute:\n%s", n, logs)
		}
		if !strings.Contains(logs, "into runs") || !strings.Contains(logs, "dropped=1") {
			t.Errorf("the error line says neither the table nor what was dropped:\n%s", logs)
		}

		e.clock.Advance(time.Minute)
		s.RecordRun(store.Run{Kind: store.KindRun})
		flush(t, s)
		logs = e.log.String()
		if n := strings.Count(logs, "history database writing records failed"); n != 2 ||
			!strings.Contains(logs, "dropped=2 failures_not_logged=1") {
			t.Errorf("a minute on, want a second line counting the one not logged:\n%s", logs)
		}

		// The other tables still take records, and the log says so.
		s.RecordSessionEvent(store.SessionEvent{SessionID: "s-1", Event: store.EventCreated})
		flush(t, s)
		if got := metric(t, e.reg, "paddock_store_written_total", "table", "session_events"); got != 1 {
			t.Errorf("session events written = %v, want 1", got)
		}
		if !strings.Contains(e.log.String(), "history database writes succeed again") {
			t.Errorf("no recovery line:\n%s", e.log.String())
		}
	})
}

func TestFullDiskSQLite(t *testing.T) {
	e := newEnv(t, store.DriverSQLite)
	cfg := e.cfg
	// A database that may grow to 64 pages of 4 KiB, as a disk that fills.
	cfg.DSN = "file:" + filepath.Join(t.TempDir(), "small.db") +
		"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=max_page_count(64)"
	cfg.RecordCode, cfg.BatchSize = true, 8
	s := open(t, cfg)
	code := strings.Repeat("x", 32<<10)
	for range 32 { // 1 MiB of code
		s.RecordRun(store.Run{Kind: store.KindRun, Code: code})
	}
	flush(t, s)
	if metric(t, e.reg, "paddock_store_write_errors_total", "", "") == 0 {
		t.Fatal("no write error on a full database")
	}
	written := metric(t, e.reg, "paddock_store_written_total", "table", "runs")
	dropped := metric(t, e.reg, "paddock_store_dropped_total", "reason", "write_error")
	if written+dropped != 32 || dropped == 0 {
		t.Errorf("written %v + dropped %v, want 32 with some dropped", written, dropped)
	}
	if !strings.Contains(e.log.String(), "full") {
		t.Errorf("the log does not say the database is full:\n%s", e.log.String())
	}
}

func TestCloseWritesTheQueue(t *testing.T) {
	eachDialect(t, func(t *testing.T, e *env) {
		s, err := store.Open(t.Context(), e.cfg)
		if err != nil {
			t.Fatal(err)
		}
		for range 100 {
			s.RecordRun(store.Run{Kind: store.KindRun})
		}
		if err := s.Close(t.Context()); err != nil {
			t.Fatalf("Close: %v", err)
		}
		s.RecordRun(store.Run{Kind: store.KindRun}) // after Close: dropped, no panic
		if got := metric(t, e.reg, "paddock_store_dropped_total", "reason", "closed"); got != 1 {
			t.Errorf("dropped{closed} = %v, want 1", got)
		}
		if got := countRows(t, e.cfg); got != 100 {
			t.Errorf("%d rows after Close, want 100", got)
		}
	})
}

func TestCloseBoundedByContext(t *testing.T) {
	eachDialect(t, func(t *testing.T, e *env) {
		cfg, entered, _ := holdWriter(e.cfg)
		s, err := store.Open(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		s.RecordRun(store.Run{Kind: store.KindRun})
		<-entered
		for range 10 {
			s.RecordRun(store.Run{Kind: store.KindRun})
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		// Close cancels the writer's context: the held batch goes on with
		// it, and fails.
		if err := s.Close(ctx); err == nil || !strings.Contains(err.Error(), "context canceled") {
			t.Errorf("Close = %v, want the context's error", err)
		}
		if got := metric(t, e.reg, "paddock_store_dropped_total", "reason", "closed"); got != 11 {
			t.Errorf("dropped{closed} = %v, want 11", got)
		}
	})
}

// countRows counts the runs in cfg's database.
func countRows(t *testing.T, cfg store.Config) int {
	t.Helper()
	db, err := store.OpenDB(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM runs`).Scan(&n); err != nil && err != sql.ErrNoRows {
		t.Fatal(err)
	}
	return n
}
