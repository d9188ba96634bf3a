package store_test

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paddock-dev/paddock/store"
)

// t0 is the fake clock's start.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// clock is a clock tests move by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// env is what a test of one dialect works with.
type env struct {
	driver string
	cfg    store.Config // a fresh database's, with the clock, registry and log below
	clock  *clock
	reg    *prometheus.Registry
	log    *syncBuffer
}

// eachDialect runs f once on a fresh SQLite database and once on a fresh
// PostgreSQL database, as subtests named by the driver.
func eachDialect(t *testing.T, f func(t *testing.T, e *env)) {
	for _, driver := range []string{store.DriverSQLite, store.DriverPostgres} {
		t.Run(driver, func(t *testing.T) {
			f(t, newEnv(t, driver))
		})
	}
}

func newEnv(t *testing.T, driver string) *env {
	t.Helper()
	e := &env{driver: driver, clock: &clock{now: t0}, reg: prometheus.NewRegistry(), log: &syncBuffer{}}
	dsn := filepath.Join(t.TempDir(), "history.db")
	if driver == store.DriverPostgres {
		dsn = postgresDSN(t)
	}
	e.cfg = store.Config{Driver: driver, DSN: dsn, Now: e.clock.Now, Registerer: e.reg,
		Logger: slog.New(slog.NewTextHandler(e.log, nil))}
	return e
}

// open opens the store of cfg, closed at the test's end.
func open(t *testing.T, cfg store.Config) *store.Store {
	t.Helper()
	s, err := store.Open(t.Context(), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func flush(t *testing.T, s *store.Store) {
	t.Helper()
	if err := s.Flush(t.Context()); err != nil {
		t.Fatalf("Flush: %v", err)
	}
}

// metric is the value of the counter or gauge name with label=value
// (any labels when label is "") in reg.
func metric(t *testing.T, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			match := label == ""
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					match = true
				}
			}
			if !match {
				continue
			}
			if m.Counter != nil {
				sum += m.GetCounter().GetValue()
			} else {
				sum += m.GetGauge().GetValue()
			}
		}
	}
	return sum
}

// syncBuffer is a log sink safe for the writer goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// allRuns is every run in s, newest first, of every tenant.
func allRuns(t *testing.T, s *store.Store) []store.Run {
	t.Helper()
	page, err := s.Runs(t.Context(), store.RunFilter{Scope: store.Scope{All: true}, Limit: store.MaxPageSize})
	if err != nil {
		t.Fatalf("Runs: %v", err)
	}
	return page.Runs
}
