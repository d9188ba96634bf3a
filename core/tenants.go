package core

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Defaults for zero per-tenant limits in Config.
const (
	DefaultTenantMaxRuns = 4
	// DefaultTenantRunQueue is how many of a tenant's runs may wait for
	// one of its runs in flight to finish.
	DefaultTenantRunQueue    = 16
	DefaultTenantMaxSessions = 8
	// DefaultTenantMaxConnections bounds the long-lived connections
	// (MCP sessions, kernel WebSockets) doors hold for one tenant.
	DefaultTenantMaxConnections = 32
	DefaultTenantRate           = 20.0
	DefaultTenantBurst          = 40
)

// Bounds on the per-tenant state.
const (
	// tenantIdle is how long a tenant with nothing in flight is kept; a
	// tenant seen again later starts with a full bucket, which it would
	// have had by then anyway (idle is never shorter than a full refill).
	tenantIdle = 5 * time.Minute
	sweepEvery = time.Minute
	// maxTenants caps the table however many subjects show up at once.
	maxTenants = 100_000
)

// tenants keeps each tenant's request bucket and counts of its runs and
// session creations in flight.
type tenants struct {
	now         func() time.Time
	rate        rate.Limit // 0: no rate limit
	burst       int
	maxRuns     int // 0: no limit
	runQueue    int // runs that may wait for a slot at maxRuns; 0: none
	maxSessions int // 0: no limit
	maxConns    int // 0: no limit
	idle        time.Duration
	max         int

	mu        sync.Mutex
	m         map[string]*tenant
	lastSweep time.Time
	waiting   int // runs waiting for a slot, all tenants
}

type tenant struct {
	lim  *rate.Limiter // nil without a rate limit
	runs int
	// waiting are the runs waiting for a run slot, oldest first; a
	// finishing run hands its slot to the first.
	waiting  []*runWaiter
	creating int
	conns    int // connections doors hold (hold)
	lastSeen time.Time
}

// Quota is a tenant's request bucket after Admit: Limit requests at
// once, Remaining of them left, full again after Reset. Limit is zero
// when there is no rate limit.
type Quota struct {
	Limit, Remaining int
	Reset            time.Duration
}

// newTenants applies cfg's limits; cfg has its defaults filled in, and a
// negative limit means none.
func newTenants(cfg Config) *tenants {
	ts := &tenants{now: cfg.Now, burst: cfg.TenantBurst, idle: tenantIdle, max: maxTenants,
		m: map[string]*tenant{}}
	if cfg.TenantRate > 0 {
		ts.rate = rate.Limit(cfg.TenantRate)
		refill := time.Duration(float64(cfg.TenantBurst) / cfg.TenantRate * float64(time.Second))
		ts.idle = max(ts.idle, refill)
	}
	ts.maxRuns = max(cfg.TenantMaxRuns, 0)
	ts.runQueue = max(cfg.TenantRunQueue, 0)
	ts.maxSessions = max(cfg.TenantMaxSessions, 0)
	ts.maxConns = max(cfg.TenantMaxConnections, 0)
	ts.lastSweep = ts.now()
	return ts
}

// getLocked returns name's entry, creating it, and drops idle entries
// now and then. It fails with ErrTooManyTenants when the table is full.
func (ts *tenants) getLocked(name string, now time.Time) (*tenant, error) {
	if now.Sub(ts.lastSweep) >= sweepEvery {
		ts.sweepLocked(now)
	}
	t, ok := ts.m[name]
	if !ok {
		if len(ts.m) >= ts.max {
			ts.sweepLocked(now)
			if len(ts.m) >= ts.max {
				return nil, ErrTooManyTenants
			}
		}
		t = &tenant{}
		if ts.rate > 0 {
			t.lim = rate.NewLimiter(ts.rate, ts.burst)
		}
		ts.m[name] = t
	}
	t.lastSeen = now
	return t, nil
}

func (ts *tenants) sweepLocked(now time.Time) {
	ts.lastSweep = now
	for name, t := range ts.m {
		if t.runs == 0 && t.creating == 0 && t.conns == 0 && now.Sub(t.lastSeen) >= ts.idle {
			delete(ts.m, name)
		}
	}
}

// len is how many tenants are tracked.
func (ts *tenants) len() int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return len(ts.m)
}

// allow takes one request from name's bucket. The quota is zero when
// there is no rate limit.
func (ts *tenants) allow(name string) (q Quota, err error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	now := ts.now()
	t, err := ts.getLocked(name, now)
	if err != nil || t.lim == nil {
		return Quota{}, err
	}
	tokens := t.lim.TokensAt(now)
	if tokens >= 1 {
		t.lim.AllowN(now, 1)
		tokens--
	} else {
		err = tooMany(ErrRateLimited, "rate_limited", fmt.Sprintf("too many requests: each tenant may send %g per second "+
			"(bursts of %d); retry after the Retry-After seconds", float64(ts.rate), ts.burst), ts.seconds(1-tokens))
	}
	q = Quota{
		Limit:     ts.burst,
		Remaining: int(math.Floor(max(tokens, 0))),
		Reset:     ts.seconds(float64(ts.burst) - tokens),
	}
	return q, err
}

// seconds is how long the bucket takes to gain n tokens.
func (ts *tenants) seconds(n float64) time.Duration {
	return time.Duration(n / float64(ts.rate) * float64(time.Second))
}

// runWaiter is a run waiting for its tenant's run slot; granted is
// closed when a finishing run hands its slot over.
type runWaiter struct {
	granted chan struct{}
}

// startRun counts a one-shot run for name; done must follow. At the
// tenant's limit the run waits for a run of the tenant to finish, first
// come first served, while fewer than runQueue wait, until deadline or
// until ctx ends; otherwise it is refused with ErrTooManyRuns. waited is
// how long it waited.
func (ts *tenants) startRun(ctx context.Context, name string, deadline time.Time) (done func(), waited time.Duration, err error) {
	ts.mu.Lock()
	t, err := ts.getLocked(name, ts.now())
	if err != nil {
		ts.mu.Unlock()
		return nil, 0, err
	}
	if ts.maxRuns == 0 || t.runs < ts.maxRuns {
		t.runs++
		ts.mu.Unlock()
		return ts.runDone(t), 0, nil
	}
	if len(t.waiting) >= ts.runQueue {
		ahead := len(t.waiting)
		ts.mu.Unlock()
		if ts.runQueue == 0 {
			return nil, 0, ts.tooManyRuns("")
		}
		return nil, 0, ts.tooManyRuns(fmt.Sprintf(", and %d more waiting for them", ahead))
	}
	w := &runWaiter{granted: make(chan struct{})}
	t.waiting = append(t.waiting, w)
	ts.waiting++
	ts.mu.Unlock()

	begin := time.Now()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	var cause error
	select {
	case <-w.granted:
		return ts.runDone(t), time.Since(begin), nil
	case <-ctx.Done():
		cause = fmt.Errorf("waiting for a run slot: %w", ctx.Err())
	case <-timer.C:
	}
	waited = time.Since(begin)
	ts.mu.Lock()
	i := slices.Index(t.waiting, w)
	if i >= 0 {
		t.waiting = slices.Delete(t.waiting, i, i+1)
		ts.waiting--
	}
	ts.mu.Unlock()
	switch {
	case i < 0 && cause == nil: // granted as the deadline passed: take it
		return ts.runDone(t), waited, nil
	case i < 0: // granted, but the caller is gone: pass it on
		ts.finishRun(t)
	}
	if cause != nil {
		return nil, waited, cause
	}
	return nil, waited, ts.tooManyRuns(fmt.Sprintf(", and this one waited %s for one of them to finish", waited.Round(time.Millisecond)))
}

// tooManyRuns is the refusal of a run at the tenant's limit; detail says
// why it could not wait.
func (ts *tenants) tooManyRuns(detail string) error {
	return tooMany(ErrTooManyRuns, "too_many_runs", fmt.Sprintf("you have %d runs in flight, "+
		"the most one tenant may%s; retry when one finishes", ts.maxRuns, detail), time.Second)
}

// waitingRuns is how many runs wait for a slot, all tenants.
func (ts *tenants) waitingRuns() int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.waiting
}

// runDone is the done of a run holding one of t's slots: it hands the
// slot to t's first waiting run, or frees it. It may be called more than
// once.
func (ts *tenants) runDone(t *tenant) func() {
	var once sync.Once
	return func() { once.Do(func() { ts.finishRun(t) }) }
}

func (ts *tenants) finishRun(t *tenant) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t.lastSeen = ts.now()
	if len(t.waiting) > 0 {
		w := t.waiting[0]
		t.waiting[0] = nil
		t.waiting = t.waiting[1:]
		ts.waiting--
		close(w.granted) // the slot passes on: runs stays as it is
		return
	}
	t.runs--
}

// startCreate counts a session creation for name, given live, the
// sessions name holds; done must follow once the session is in the
// kernels' table (or failed). live runs under the lock so that
// concurrent creations see each other.
func (ts *tenants) startCreate(name string, live func() int, retryAfter time.Duration) (done func(), err error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t, err := ts.getLocked(name, ts.now())
	if err != nil {
		return nil, err
	}
	if ts.maxSessions > 0 && live()+t.creating >= ts.maxSessions {
		return nil, tooMany(ErrTenantSessions, "too_many_sessions", fmt.Sprintf("you hold %d sessions, the most one tenant may; "+
			"delete one (or let one expire) and retry", ts.maxSessions), retryAfter)
	}
	t.creating++
	return func() { ts.finish(t, &t.creating) }, nil
}

// connRetry is the Retry-After of a refused connection: a slot frees
// only when one of the tenant's connections ends, which the server
// cannot foresee, so clients are asked to wait a few seconds.
const connRetry = 5 * time.Second

// hold counts a long-lived connection for name; release ends it and may
// be called more than once.
func (ts *tenants) hold(name string) (release func(), err error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t, err := ts.getLocked(name, ts.now())
	if err != nil {
		return nil, err
	}
	if ts.maxConns > 0 && t.conns >= ts.maxConns {
		return nil, tooMany(ErrTooManyConnections, "too_many_connections", fmt.Sprintf("you hold %d connections "+
			"(MCP sessions, kernel WebSockets), the most one tenant may; end one and retry", ts.maxConns), connRetry)
	}
	t.conns++
	var once sync.Once
	return func() { once.Do(func() { ts.finish(t, &t.conns) }) }, nil
}

func (ts *tenants) finish(t *tenant, counter *int) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	*counter--
	t.lastSeen = ts.now()
}
