package pool

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/paddock-dev/paddock/runner"
)

// Log attribute keys.
const (
	keyTemplate  = "template"
	keySandboxID = "sandbox_id"
)

// destroyTimeout bounds one Destroy call made off the request path.
const destroyTimeout = 30 * time.Second

// Manager keeps warm sandboxes per template and hands them out once each.
// It is safe for concurrent use.
type Manager struct {
	rt    runner.Runtime
	cfg   Config
	log   *slog.Logger
	pools map[string]*tpool // fixed after New
	order []*tpool          // config order, for Stats

	runSlots  chan struct{}
	coldSlots chan struct{}

	// ctx is cancelled when Close begins; fillers and cold starts derive
	// from it so Close interrupts them.
	ctx    context.Context
	cancel context.CancelFunc

	// Filler retry backoff; tests replace wait to observe it.
	backoffMin, backoffMax time.Duration
	wait                   func(ctx context.Context, d time.Duration) error

	fillers     sync.WaitGroup
	fillersDone chan struct{}

	mu      sync.Mutex
	closed  bool
	started bool
	// live counts sandboxes that are starting, ready, leased or being
	// destroyed; Close waits for it to reach zero.
	live    int
	drained chan struct{} // closed when live drops to zero; nil when nobody waits
	leases  map[string]*tpool
}

// tpool is one template's state. Fields below wake are guarded by
// Manager.mu.
type tpool struct {
	tmpl Template
	wake chan struct{} // buffered(1): pokes the filler

	ready    []*entry
	inUse    int
	starting int
	hits     uint64
	misses   uint64
	failures uint64
	healthy  bool
}

// entry is a ready sandbox; taken is closed when it leaves the ready list.
type entry struct {
	sb    runner.Sandbox
	taken chan struct{}
}

// New checks cfg and returns a manager for it. Call Start to begin filling.
// logger may be nil.
func New(rt runner.Runtime, cfg Config, logger *slog.Logger) (*Manager, error) {
	if rt == nil {
		return nil, fmt.Errorf("pool config: no runtime")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{
		rt:          rt,
		cfg:         cfg,
		log:         logger,
		pools:       make(map[string]*tpool, len(cfg.Templates)),
		runSlots:    make(chan struct{}, cfg.MaxRuns),
		coldSlots:   make(chan struct{}, cfg.MaxColdStarts),
		ctx:         ctx,
		cancel:      cancel,
		backoffMin:  100 * time.Millisecond,
		backoffMax:  5 * time.Second,
		wait:        sleep,
		fillersDone: make(chan struct{}),
		leases:      make(map[string]*tpool),
	}
	for _, t := range cfg.Templates {
		tp := &tpool{tmpl: t, wake: make(chan struct{}, 1)}
		m.pools[t.Name] = tp
		m.order = append(m.order, tp)
	}
	return m, nil
}

// start starts one sandbox of tp's template, bounded by StartTimeout.
func (m *Manager) start(ctx context.Context, tp *tpool) (runner.Sandbox, error) {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.StartTimeout)
	defer cancel()
	sb, err := m.rt.Start(ctx, tp.tmpl.Spec)
	if err != nil {
		return nil, fmt.Errorf("starting %s sandbox: %w", tp.tmpl.Name, err)
	}
	if sb == nil {
		return nil, fmt.Errorf("starting %s sandbox: runtime returned no sandbox", tp.tmpl.Name)
	}
	return sb, nil
}

// poke wakes tp's filler without blocking.
func (tp *tpool) poke() {
	select {
	case tp.wake <- struct{}{}:
	default:
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func isDone(sb runner.Sandbox) bool {
	select {
	case <-sb.Done():
		return true
	default:
		return false
	}
}
