package core

import (
	"cmp"
	"errors"
	"log/slog"
	"math"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/store"
)

// Defaults for zero Config fields.
const (
	DefaultTimeout        = 10 * time.Second
	DefaultMaxTimeout     = 60 * time.Second
	DefaultMaxOutputBytes = 1 << 20
	DefaultMaxFileBytes   = 10 << 20
)

// Limits on list sizes in a run request.
const (
	maxFiles   = 100
	maxArgs    = 1000
	maxEnv     = 1000
	maxPathLen = 4096
)

// Log attribute keys.
const (
	keyTemplate = "template"
	keyTenant   = "tenant"
	keyDoor     = "door"
)

// Config is the core's typed configuration. Zero fields take defaults.
type Config struct {
	// Pool runs the programs. Required.
	Pool *pool.Manager
	// Kernels serves sessions. Nil disables them: every session call
	// fails with KindNotImplemented (ErrSessionsDisabled).
	Kernels *kernels.Manager
	// Templates describe the pool's templates to clients. A request may
	// name one; else its language picks one: see Template.DefaultFor and
	// Template.WarmImports.
	Templates []Template

	// DefaultTimeout is a run's wall-time limit when the request gives
	// none and its template's Limits.TimeoutMS is zero.
	DefaultTimeout time.Duration
	// MaxTimeout is the largest timeout a run may ask for.
	MaxTimeout time.Duration
	// MaxOutputBytes caps each output stream of a run by default and is
	// the largest cap a run may ask for.
	MaxOutputBytes int64
	// The largest resource limits a run or session may ask for in place
	// of its template's. Zero fields take the DefaultMax* values.
	MaxMemoryMB  int
	MaxProcesses int
	MaxCPUs      float64
	MaxDiskMB    int
	MaxOpenFiles int
	// MaxFileBytes caps a session file read (ReadFile's maxBytes 0) and
	// write.
	MaxFileBytes int64

	// Auth verifies tokens; a token's sub is the tenant that owns what it
	// creates. With no key configured, every caller is the anonymous
	// tenant "". New fails if Auth.Validate does.
	Auth Auth

	// Per-tenant limits, binding the anonymous tenant too. Each takes its
	// Default* value when zero (TenantBurst: at least the rate);
	// TenantMaxRuns, TenantMaxSessions, TenantMaxConnections and
	// TenantRate are off when negative.
	//
	// TenantMaxRuns caps each tenant's one-shot runs in flight.
	TenantMaxRuns int
	// TenantRunQueue is how many more of a tenant's runs may wait, first
	// come first served, for one of its runs in flight to finish; a run
	// waits within the pool's queue deadline, counted from its arrival.
	// Beyond, or past the deadline, a run is refused. Zero takes
	// DefaultTenantRunQueue; negative: none wait.
	TenantRunQueue int
	// TenantMaxSessions caps each tenant's live sessions.
	TenantMaxSessions int
	// TenantMaxConnections caps the long-lived connections doors hold
	// for each tenant (HoldConnection): MCP sessions, kernel WebSockets.
	TenantMaxConnections int
	// TenantRate is each tenant's sustained request rate per second
	// (Admit); TenantBurst is how many requests it may send at once.
	TenantRate  float64
	TenantBurst int

	// AuthFailureLimit is how many failed authentications one client
	// address (its IPv4 address or IPv6 /64) may have outstanding; one is
	// forgiven every AuthFailureWindow divided by the limit. At the limit,
	// Authenticate refuses the address with KindTooMany before its token
	// is read. Zero fields take DefaultAuthFailureLimit and
	// DefaultAuthFailureWindow; a negative limit turns the check off.
	AuthFailureLimit  int
	AuthFailureWindow time.Duration

	// Logger receives the core's logs; nil discards them.
	// Store keeps the history of runs, cells, session events, failed
	// authentications and admin actions; nil keeps none. The core only
	// records into it (never blocking) and answers history queries.
	Store *store.Store
	// Egress configures the runs that ask for a network (network.go);
	// nil refuses them all.
	Egress *Egress

	Logger *slog.Logger
	// Now is the clock for token times and rate limits; nil is time.Now.
	Now func() time.Time
	// Registry receives the core's metrics; nil makes one of its own
	// (never the global one), which Gatherer returns.
	Registry *prometheus.Registry
}

// Service is the door-neutral core: every door calls it for tenancy,
// auth, limits, validation, accounting and history. It is safe for
// concurrent use.
type Service struct {
	cfg       Config
	log       *slog.Logger
	pool      *pool.Manager
	kernels   *kernels.Manager   // nil when sessions are disabled
	targets   map[string]target  // template → where its work goes
	routes    map[string]*routes // language → its templates for requests naming none
	langOf    map[string]string  // template → language
	runtimeOf map[string]string  // template → runtime
	// templateNets are the templates' own egress allowances (allowance.go).
	templateNets map[string]NetworkPolicy
	languages    []string  // sorted, for messages
	names        []string  // templates, sorted, for messages
	verifier     *verifier // nil when auth is off
	tenants      *tenants
	metrics      *metrics
	history      *history
	versions     lateVersions // of templates whose root filesystem came after New

	// authFailures counts failed authentications per client address.
	authFailures *authFailures
}

// New checks cfg and returns the service. It fails when cfg.Pool is nil
// or cfg.Auth is unusable.
func New(cfg Config) (*Service, error) {
	if cfg.Pool == nil {
		return nil, errors.New("Config.Pool is nil")
	}
	if err := cfg.Auth.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	s := &Service{cfg: cfg, log: cfg.Logger, pool: cfg.Pool, kernels: cfg.Kernels,
		targets: map[string]target{}, routes: newRoutes(cfg.Templates), langOf: map[string]string{}, runtimeOf: map[string]string{},
		verifier: newVerifier(cfg.Auth, cfg.Now), tenants: newTenants(cfg), authFailures: newAuthFailures(cfg),
		history: newHistory()}
	var err error
	if s.templateNets, err = templateNetworks(cfg.Templates); err != nil {
		return nil, err
	}
	s.metrics = newMetrics(cfg.Registry, cfg.Pool)
	if cfg.Kernels != nil {
		cfg.Kernels.SetNetwork(s.serveSessionNetwork)
	}
	s.metrics.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "paddock_tenant_runs_waiting",
		Help: "One-shot runs waiting for one of their tenant's runs in flight to finish (--tenant-max-runs), all tenants.",
	}, func() float64 { return float64(s.tenants.waitingRuns()) }))
	for _, t := range cfg.Templates {
		s.langOf[t.Name] = t.Language
		s.runtimeOf[t.Name] = t.Runtime
		timeout := cfg.DefaultTimeout
		if t.Limits.TimeoutMS > 0 {
			timeout = min(time.Duration(t.Limits.TimeoutMS)*time.Millisecond, cfg.MaxTimeout)
		}
		s.targets[t.Name] = target{template: t.Name, language: t.Language, defaultTimeout: timeout}
		s.names = append(s.names, t.Name)
	}
	for lang := range s.routes {
		s.languages = append(s.languages, lang)
	}
	slices.Sort(s.languages)
	slices.Sort(s.names)
	pooled := cfg.Pool.Templates()
	for _, t := range cfg.Templates {
		if !slices.Contains(pooled, t.Name) {
			s.log.Warn("template has no pool; its runs will fail", keyTemplate, t.Name)
		}
	}
	return s, nil
}

func (cfg Config) withDefaults() Config {
	if cfg.MaxTimeout <= 0 {
		cfg.MaxTimeout = DefaultMaxTimeout
	}
	if cfg.DefaultTimeout <= 0 {
		cfg.DefaultTimeout = DefaultTimeout
	}
	cfg.DefaultTimeout = min(cfg.DefaultTimeout, cfg.MaxTimeout)
	if cfg.MaxOutputBytes <= 0 {
		cfg.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if cfg.MaxFileBytes <= 0 {
		cfg.MaxFileBytes = DefaultMaxFileBytes
	}
	cfg.MaxMemoryMB = cmp.Or(max(cfg.MaxMemoryMB, 0), DefaultMaxMemoryMB)
	cfg.MaxProcesses = cmp.Or(max(cfg.MaxProcesses, 0), DefaultMaxProcesses)
	cfg.MaxCPUs = cmp.Or(max(cfg.MaxCPUs, 0), DefaultMaxCPUs)
	cfg.MaxDiskMB = cmp.Or(max(cfg.MaxDiskMB, 0), DefaultMaxDiskMB)
	cfg.MaxOpenFiles = cmp.Or(max(cfg.MaxOpenFiles, 0), DefaultMaxOpenFiles)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.TenantMaxRuns = cmp.Or(cfg.TenantMaxRuns, DefaultTenantMaxRuns)
	cfg.TenantRunQueue = cmp.Or(cfg.TenantRunQueue, DefaultTenantRunQueue)
	cfg.TenantMaxSessions = cmp.Or(cfg.TenantMaxSessions, DefaultTenantMaxSessions)
	cfg.TenantMaxConnections = cmp.Or(cfg.TenantMaxConnections, DefaultTenantMaxConnections)
	cfg.TenantRate = cmp.Or(cfg.TenantRate, DefaultTenantRate)
	if cfg.TenantBurst <= 0 {
		cfg.TenantBurst = max(DefaultTenantBurst, int(math.Ceil(cfg.TenantRate)))
	}
	return cfg
}

// Config returns the effective configuration, defaults filled in.
func (s *Service) Config() Config { return s.cfg }

// Ready reports whether every pooled template has produced a working
// sandbox.
func (s *Service) Ready() bool { return s.pool.Ready() }

// PoolStats is the state of every template's pool.
func (s *Service) PoolStats() []pool.Stats { return s.pool.Stats() }

// SessionsEnabled reports whether this server keeps sessions.
func (s *Service) SessionsEnabled() bool { return s.kernels != nil }

// Gatherer serves the core's metrics (and the pool's, the Go runtime's
// and the process's) to a scrape.
func (s *Service) Gatherer() prometheus.Gatherer { return s.metrics.reg }

// Registerer is where a door registers its own metrics, served with the
// core's on /metrics.
func (s *Service) Registerer() prometheus.Registerer { return s.metrics.reg }
