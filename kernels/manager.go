package kernels

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/paddock-dev/paddock/pool"
)

// Log attribute keys.
const (
	keySessionID = "session_id"
	keyTemplate  = "template"
	keySandboxID = "sandbox_id"
	keyOwner     = "owner"
)

// Manager keeps stateful sessions, each on one sandbox leased from the
// pool. It is safe for concurrent use.
type Manager struct {
	pool *pool.Manager
	cfg  Config
	log  *slog.Logger
	// execSlack is how long past a cell's timeout its kernel may take.
	execSlack time.Duration

	// ctx is cancelled when Close begins; Create's waits derive from it.
	ctx    context.Context
	cancel context.CancelFunc

	reaperDone chan struct{}
	creating   sync.WaitGroup // Creates between reserving a slot and inserting

	// mu guards the table and every session's mutable fields.
	mu       sync.Mutex
	sessions map[string]*session
	pending  int // slots reserved by Creates in flight
	waking   int // sessions being woken, counted awake (room.go)
	// sleepBytes is the disk the images of hibernated sessions take.
	sleepBytes int64
	started    bool
	closed     bool
	network    NetworkFunc // serves networked sessions' egress (network.go)

	// catMu makes the catalog's writes one at a time (catalog.go).
	catMu sync.Mutex
}

// New checks cfg and returns a manager that leases sandboxes from p. Call
// Start to run the reaper. logger may be nil.
func New(p *pool.Manager, cfg Config, logger *slog.Logger) (*Manager, error) {
	if p == nil {
		return nil, errors.New("kernels config: no pool")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.HibernateDir == "" || !p.CanHibernate() {
		cfg.Catalog = nil // nothing a restart could take over
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{
		pool:       p,
		cfg:        cfg,
		execSlack:  defaultExecuteSlack,
		log:        logger,
		ctx:        ctx,
		cancel:     cancel,
		reaperDone: make(chan struct{}),
		sessions:   make(map[string]*session),
	}
	if cfg.HibernateDir != "" {
		actx, done := context.WithTimeout(ctx, catalogTimeout)
		defer done()
		keep, err := m.adopt(actx)
		if err == nil {
			err = prepareHibernateDir(cfg.HibernateDir, keep)
		}
		if err != nil {
			cancel()
			return nil, err
		}
	}
	return m, nil
}

// Config returns the effective configuration, defaults filled in.
func (m *Manager) Config() Config { return m.cfg }

// Start launches the reaper. Calls after the first, or after Close, do
// nothing.
func (m *Manager) Start() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started || m.closed {
		return
	}
	m.started = true
	go m.reap()
}

// Close closes every session and releases its sandbox, stops the reaper
// and waits, bounded by ctx, for it and for Creates in flight. With a
// Catalog it first hibernates every running session, within ctx, and
// keeps the records for the next manager; one it cannot save is recorded
// lost. Create
// fails with ErrClosed once Close has begun; executions in flight end as
// their kernels go away. Close may be called more than once and
// concurrently. Call it before pool.Close, which waits for the sandboxes
// sessions hold.
func (m *Manager) Close(ctx context.Context) error {
	var all []*session
	m.mu.Lock()
	first := !m.closed
	if first {
		m.closed = true
		m.cancel()
		if !m.started {
			m.started = true
			close(m.reaperDone)
		}
		for _, s := range m.sessions {
			all = append(all, s)
		}
	}
	m.mu.Unlock()

	// With a catalog the sessions are saved for the next server, not
	// ended (catalog.go).
	keep := first && m.cfg.Catalog != nil
	if keep && len(all) > 0 {
		saved, lost := m.saveAll(ctx, all)
		m.log.Info("saved the open sessions for the next server", "hibernated", saved, "lost", lost)
	}
	m.mu.Lock()
	for _, s := range all {
		delete(m.sessions, s.id)
		s.closed, s.kept = true, keep
	}
	m.mu.Unlock()
	for _, s := range all {
		if keep {
			s.markEnded()
			m.release(s)
		} else {
			m.end(s, "server closing")
		}
	}
	creating := make(chan struct{})
	go func() {
		m.creating.Wait()
		close(creating)
	}()
	for _, ch := range []<-chan struct{}{m.reaperDone, creating} {
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("closing kernels: %w", ctx.Err())
		}
	}
	return nil
}
