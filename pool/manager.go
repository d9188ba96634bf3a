package pool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
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

	// snap is the runtime's snapshot ability, nil when it has none.
	snap runner.Snapshotter
	now  func() time.Time

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
	// customMem maps each leased sandbox started with custom limits
	// to its memory limit.
	customMem map[string]int64

	// Admission (admit.go): run and start slots in use (refills among the
	// starts), the requests and the fillers waiting for them, and the
	// rate requests were served at.
	runs, starts, refills int
	// Cells running in sessions, and whether the cap of BusyStartBudget
	// still holds after the last (busy.go); holdGen tells the latest hold's
	// timer from older ones.
	cells      int
	streaks    map[string]*streak // each session's run of cells, by key (busy.go)
	holding    bool
	holdGen    uint64
	queue      fairQueue
	refillWait []chan struct{}
	served     serveRate
}

// tpool is one template's state. Fields below wake are guarded by
// Manager.mu.
type tpool struct {
	tmpl Template
	wake chan struct{} // buffered(1): pokes the filler

	// provided is set once the template takes requests: at once, or for a
	// deferred one when Provide has set its spec; failed, once Fail says
	// it never will (deferred.go).
	provided atomic.Bool
	failed   bool

	ready    []*entry
	inUse    int
	starting int
	hits     uint64
	misses   uint64
	failures uint64
	healthy  bool

	// Adaptive size: target follows demand between Size and Max.
	target int
	demand demand

	// Snapshot state: the template's own image, and the networked one
	// that networked starts restore from (netsnap.go). Restores and
	// their failures count both.
	snapImage
	net             snapImage
	restores        uint64
	colds           uint64
	restoreFailures uint64

	// custom counts the sandboxes in use that were started with other
	// limits than the template's (also counted in inUse, from the moment
	// they begin to start); customMemory is the sum of their memory
	// limits.
	custom       int
	customMemory int64

	// Kernel-ready sandboxes (kernels.go); kwake pokes their filler.
	kwake           chan struct{}
	kernels         []*kentry
	kernelsStarting int
	kernelHits      uint64
	kernelMisses    uint64
	kernelTaken     bool // one was taken since the filler last looked
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
		now:         time.Now,
		ctx:         ctx,
		cancel:      cancel,
		backoffMin:  100 * time.Millisecond,
		backoffMax:  5 * time.Second,
		wait:        sleep,
		fillersDone: make(chan struct{}),
		leases:      make(map[string]*tpool),
		customMem:   make(map[string]int64),
	}
	if sn, ok := rt.(runner.Snapshotter); ok {
		m.snap = sn
	}
	for _, t := range cfg.Templates {
		tp := &tpool{tmpl: t, wake: make(chan struct{}, 1), target: t.Size, snapImage: newSnapImage(false), net: newSnapImage(true),
			kwake: make(chan struct{}, 1)}
		tp.provided.Store(!t.Deferred)
		m.pools[t.Name] = tp
		m.order = append(m.order, tp)
	}
	return m, nil
}

// start starts one sandbox of spec, bounded by StartTimeout.
func (m *Manager) start(ctx context.Context, name string, spec runner.Spec) (runner.Sandbox, error) {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.StartTimeout)
	defer cancel()
	sb, err := m.rt.Start(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("starting %s sandbox: %w", name, err)
	}
	if sb == nil {
		return nil, fmt.Errorf("starting %s sandbox: runtime returned no sandbox", name)
	}
	return sb, nil
}

// poke wakes tp's filler without blocking.
// make brings up a sandbox for tp: by restoring the template's snapshot
// when it has a good one, else by starting one from scratch. A failed
// restore falls back to a cold start and has the image rebuilt. A cold
// start on the request path (onDemand) skips the warm-up: the request
// should not wait for imports it may not need. A start for the pool
// (not onDemand) is a background one: nobody waits for it, so it may
// come up at the host's lowest CPU weight (runner.Spec.Background).
func (m *Manager) make(ctx context.Context, tp *tpool, onDemand bool) (runner.Sandbox, StartKind, error) {
	if sb, err := m.restore(ctx, tp, &tp.snapImage, !onDemand); sb != nil || err != nil {
		return sb, StartRestore, err
	}
	spec := tp.tmpl.Spec
	spec.Background = !onDemand
	if onDemand {
		spec.Warmup = ""
	}
	sb, err := m.start(ctx, tp.tmpl.Name, spec)
	if err != nil {
		return nil, "", err
	}
	m.count(tp, &tp.colds)
	return sb, StartCold, nil
}

// restore brings up a sandbox of tp from si's image when si has a good
// one. It returns no sandbox and no error when there is none, or when the
// restore failed (the failure is counted and the image retired, see
// restoreFailed): the caller then cold-starts. An error means ctx or the
// manager ended the restore.
func (m *Manager) restore(ctx context.Context, tp *tpool, si *snapImage, background bool) (runner.Sandbox, error) {
	img, ok := m.image(si)
	if !ok {
		return nil, nil
	}
	img.Spec.Background = background
	rctx, cancel := context.WithTimeout(ctx, m.cfg.StartTimeout)
	sb, err := m.snap.Restore(rctx, img)
	if err != nil && rctx.Err() != nil && ctx.Err() == nil {
		err = fmt.Errorf("%w: %w", err, context.DeadlineExceeded) // StartTimeout ran out
	}
	cancel()
	if err == nil && sb != nil {
		m.mu.Lock()
		tp.restores++
		si.strikes = 0
		m.mu.Unlock()
		return sb, nil
	}
	if ctx.Err() != nil || m.ctx.Err() != nil {
		return nil, fmt.Errorf("restoring %s sandbox: %w", tp.tmpl.Name, err)
	}
	if err == nil {
		err = errors.New("the runtime returned no sandbox")
	}
	m.restoreFailed(tp, si, img, err)
	return nil, nil
}

func (m *Manager) count(tp *tpool, n *uint64) {
	m.mu.Lock()
	*n++
	m.mu.Unlock()
}

func (tp *tpool) poke() {
	for _, ch := range []chan struct{}{tp.wake, tp.kwake} {
		select {
		case ch <- struct{}{}:
		default:
		}
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
