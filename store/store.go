package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Store is an open history database and its writer. Its Record methods
// are safe for concurrent use and never block; on a nil *Store they do
// nothing.
type Store struct {
	cfg Config
	db  *sql.DB
	log *slog.Logger
	m   *metrics

	droppedFull, droppedWrite, droppedClosed prometheus.Counter

	q        chan any // Run, SessionEvent, AuthFailure, AdminAction
	flushReq chan chan struct{}
	stop     chan struct{} // closed by Close
	done     chan struct{} // closed when the writer has returned
	// writeCtx bounds the writer's statements; cancelled when Close's
	// ctx ends before the queue is written.
	writeCtx     context.Context
	cancelWrites context.CancelFunc

	mu     sync.RWMutex // guards closed against the sends of Record
	closed bool

	w writerState // the writer goroutine's own
}

// Open opens (creating if need be) the database cfg names, migrates its
// schema to this binary's version and starts the writer. It fails when
// the database cannot be reached or migrated, or its schema is newer
// than the binary (ErrSchemaTooNew).
func Open(ctx context.Context, cfg Config) (*Store, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	db, err := openDB(cfg)
	if err != nil {
		return nil, err
	}
	if err := db.PingContext(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("reaching the %s database: %w", cfg.Driver, err), db.Close())
	}
	if err := migrate(ctx, db, cfg.Driver, -1); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	s := &Store{cfg: cfg, db: db, log: cfg.Logger.With("component", "store"),
		q: make(chan any, cfg.QueueSize), flushReq: make(chan chan struct{}),
		stop: make(chan struct{}), done: make(chan struct{})}
	s.m, err = newMetrics(cfg.Registerer, func() float64 { return float64(len(s.q)) })
	if err != nil {
		return nil, errors.Join(fmt.Errorf("registering the store's metrics: %w", err), db.Close())
	}
	s.droppedFull = s.m.dropped.WithLabelValues(dropQueueFull)
	s.droppedWrite = s.m.dropped.WithLabelValues(dropWriteError)
	s.droppedClosed = s.m.dropped.WithLabelValues(dropClosed)
	s.writeCtx, s.cancelWrites = context.WithCancel(context.WithoutCancel(ctx))
	s.w.lastPrune = cfg.Now()
	go s.loop()
	return s, nil
}

// Close writes what is queued, within ctx, stops the writer and closes
// the database. Records left when ctx ends are dropped (and counted);
// Close then returns ctx's error. Records after Close are dropped.
func (s *Store) Close(ctx context.Context) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	close(s.stop)
	var err error
	select {
	case <-s.done:
	case <-ctx.Done():
		s.cancelWrites()
		<-s.done
		err = fmt.Errorf("closing the store: %w", ctx.Err())
	}
	s.cancelWrites()
	return errors.Join(err, s.db.Close())
}

// Flush waits until every record queued before the call has been written
// (or dropped by a failing write), and retention has run if it was due.
func (s *Store) Flush(ctx context.Context) error {
	ack := make(chan struct{})
	select {
	case s.flushReq <- ack:
	case <-s.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-ack:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// RecordRun queues r. At defaults to now; CodeSHA256 is computed from
// Code, which is then dropped unless Config.RecordCode is on.
func (s *Store) RecordRun(r Run) {
	if s == nil {
		return
	}
	if r.At.IsZero() {
		r.At = s.cfg.Now()
	}
	if r.CodeSHA256 == "" && r.Code != "" {
		sum := sha256.Sum256([]byte(r.Code))
		r.CodeSHA256 = hex.EncodeToString(sum[:])
	}
	if !s.cfg.RecordCode {
		r.Code = ""
	}
	s.enqueue(r)
}

// RecordSessionEvent queues e; At defaults to now.
func (s *Store) RecordSessionEvent(e SessionEvent) {
	if s == nil {
		return
	}
	if e.At.IsZero() {
		e.At = s.cfg.Now()
	}
	s.enqueue(e)
}

// RecordAuthFailure queues f; At defaults to now.
func (s *Store) RecordAuthFailure(f AuthFailure) {
	if s == nil {
		return
	}
	if f.At.IsZero() {
		f.At = s.cfg.Now()
	}
	s.enqueue(f)
}

// RecordAdminAction queues a; At defaults to now.
func (s *Store) RecordAdminAction(a AdminAction) {
	if s == nil {
		return
	}
	if a.At.IsZero() {
		a.At = s.cfg.Now()
	}
	s.enqueue(a)
}

// enqueue hands rec to the writer, or drops it when the queue is full or
// the store closed.
func (s *Store) enqueue(rec any) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		s.droppedClosed.Inc()
		return
	}
	select {
	case s.q <- rec:
	default:
		s.droppedFull.Inc()
	}
}

// RecordsCode reports whether runs' code is kept (Config.RecordCode).
func (s *Store) RecordsCode() bool { return s.cfg.RecordCode }

// Driver is the store's driver, DriverSQLite or DriverPostgres.
func (s *Store) Driver() string { return s.cfg.Driver }

// DB is the store's database, for the tables other packages keep in it
// (api/jobs' SQL backend, through cmd); the store owns their schema.
func (s *Store) DB() *sql.DB { return s.db }
