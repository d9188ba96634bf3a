package egress

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
)

// maxHeaderBytes bounds a client request's header block.
const maxHeaderBytes = 64 << 10

// A Resolver answers a name's addresses; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config configures the proxy of one sandbox.
type Config struct {
	// Sandbox names the sandbox in logs (sandbox_id).
	Sandbox string
	// Policy decides every request, by the name asked for; the zero
	// Policy refuses everything.
	Policy Policy
	// Guard checks every resolved address; nil means NewGuard with the
	// default blocks and the host's own addresses.
	Guard *Guard
	// Resolver resolves names; nil means net.DefaultResolver.
	Resolver Resolver
	// Dial connects to a checked address (an IP and port, never a name);
	// nil means a net.Dialer.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// Secrets are headers the operator attaches to plain-HTTP requests
	// for a host (an exact name): the proxy speaks TLS to that host
	// itself (secrets.go), sets them upstream, replacing any the client
	// sent, and strips them, and any header echoing their values, from
	// the answer.
	Secrets map[string]http.Header
	// SecretRoots verify secret hosts' certificates; nil means the
	// system's roots.
	SecretRoots *x509.CertPool
	// Limits bound the proxy; zero fields take their defaults.
	Limits Limits
	// Logger receives a line per refusal and per cut connection; nil
	// means slog.Default.
	Logger *slog.Logger
	// Metrics are the server's shared instruments; nil means unregistered
	// ones of the proxy's own.
	Metrics *Metrics
}

// A Proxy is one sandbox's HTTP forward proxy: CONNECT host:port and
// absolute-form http:// requests, nothing else. It is an http.Handler;
// Serve runs it on a listener with the server settings it needs.
type Proxy struct {
	sandbox  string
	policy   Policy
	swapped  atomic.Pointer[Policy] // SetPolicy's, in place of policy (retarget.go)
	guard    *Guard
	resolver Resolver
	dial     func(ctx context.Context, network, address string) (net.Conn, error)
	secrets  map[string]http.Header
	roots    *x509.CertPool
	limits   Limits
	log      *slog.Logger
	metrics  *Metrics
	clock    clock
	rate     [2]*bucket
	counters counters
	slots    chan struct{}

	ctx    context.Context // ends at Close: bucket waits, dials and tunnels stop
	cancel context.CancelFunc

	mu      sync.Mutex
	closed  bool
	conns   map[net.Conn]struct{} // hijacked clients and upstreams, closed by Close
	closers []io.Closer           // the servers, listeners and packet sockets served
}

// New returns the proxy for cfg.
func New(cfg Config) (*Proxy, error) {
	lim, err := cfg.Limits.withDefaults()
	if err != nil {
		return nil, err
	}
	secrets, err := normalizeSecrets(cfg.Secrets)
	if err != nil {
		return nil, err
	}
	p := &Proxy{
		sandbox: cfg.Sandbox, policy: cfg.Policy, guard: cfg.Guard, resolver: cfg.Resolver,
		dial: cfg.Dial, secrets: secrets, roots: cfg.SecretRoots, limits: lim, log: cfg.Logger, metrics: cfg.Metrics,
		clock: realClock{}, slots: make(chan struct{}, lim.MaxConns), conns: map[net.Conn]struct{}{},
	}
	if p.guard == nil {
		p.guard = NewGuard(GuardConfig{})
	}
	if p.resolver == nil {
		p.resolver = net.DefaultResolver
	}
	if p.dial == nil {
		p.dial = (&net.Dialer{}).DialContext
	}
	if p.log == nil {
		p.log = slog.Default()
	}
	if p.metrics == nil {
		if p.metrics, err = NewMetrics(nil); err != nil {
			return nil, err
		}
	}
	p.counters.max = [2]int64{lim.MaxBytesOut, lim.MaxBytesIn}
	p.setClock(realClock{})
	p.ctx, p.cancel = context.WithCancel(context.Background())
	return p, nil
}

// setClock sets the clock the rate buckets run on (tests: a fake one).
func (p *Proxy) setClock(c clock) {
	p.clock = c
	p.rate = [2]*bucket{newBucket(c, p.limits.BytesPerSecond), newBucket(c, p.limits.BytesPerSecond)}
}

func normalizeSecrets(in map[string]http.Header) (map[string]http.Header, error) {
	out := make(map[string]http.Header, len(in))
	for host, h := range in {
		name, _, err := normalizeName(host)
		if err != nil {
			return nil, fmt.Errorf("secrets: %w", err)
		}
		if err := checkSecretHeaders(name, h); err != nil {
			return nil, err
		}
		c := http.Header{}
		for k, vs := range h {
			c[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
		}
		out[name] = c
	}
	return out, nil
}

// Serve answers proxy requests on ln until Close; it returns
// http.ErrServerClosed then.
func (p *Proxy) Serve(ln net.Listener) error { return p.serveHTTP(ln, p) }

// serveHTTP runs h on ln with the proxy's server settings.
func (p *Proxy) serveHTTP(ln net.Listener, h http.Handler) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: p.limits.IdleTimeout,
		IdleTimeout:       p.limits.IdleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(p.log.Handler(), slog.LevelDebug),
	}
	if !p.hold(srv) {
		_ = ln.Close()
		return http.ErrServerClosed
	}
	return srv.Serve(p.limitClients(ln))
}

// limitClients holds ln's client connections to twice MaxConns. Each
// listener has its own bound: shared, the accept loops waiting on it
// would hold its slots, and one listener's clients could starve another.
func (p *Proxy) limitClients(ln net.Listener) *limitListener {
	return newLimitListener(ln, make(chan struct{}, 2*p.limits.MaxConns))
}

// hold keeps c to be closed by Close; it reports false when the proxy is
// already closed (c is not closed then).
func (p *Proxy) hold(c io.Closer) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.closers = append(p.closers, c)
	return true
}

// Close stops the proxy: it closes every listener, every client
// connection and every upstream connection, and ends waits on the rate
// limit.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	closers := p.closers
	p.closers = nil
	conns := p.conns
	p.conns = map[net.Conn]struct{}{}
	p.mu.Unlock()
	p.cancel()
	var errs []error
	for _, c := range closers {
		if err := c.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	for c := range conns {
		_ = c.Close()
	}
	return errors.Join(errs...)
}

// Stats returns what the proxy has carried and refused so far.
func (p *Proxy) Stats() Stats { return p.counters.stats() }

// track keeps c to be closed by Close; it closes c at once, and reports
// false, when the proxy is already closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
}

// ServeHTTP answers one proxy request.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.serveConnect(w, r)
		return
	}
	p.serveForward(w, r)
}
