package core

import (
	"fmt"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Defaults for zero per-tenant limits in Config.
const (
	DefaultTenantMaxRuns     = 4
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
	maxSessions int // 0: no limit
	maxConns    int // 0: no limit
	idle        time.Duration
	max         int

	mu        sync.Mutex
	m         map[string]*tenant
	lastSweep time.Time
}

type tenant struct {
	lim      *rate.Limiter // nil without a rate limit
	runs     int
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

// startRun counts a one-shot run for name; done must follow.
func (ts *tenants) startRun(name string) (done func(), err error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t, err := ts.getLocked(name, ts.now())
	if err != nil {
		return nil, err
	}
	if ts.maxRuns > 0 && t.runs >= ts.maxRuns {
		return nil, tooMany(ErrTooManyRuns, "too_many_runs", fmt.Sprintf("you have %d runs in flight, "+
			"the most one tenant may; retry when one finishes", ts.maxRuns), time.Second)
	}
	t.runs++
	return func() { ts.finish(t, &t.runs) }, nil
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
