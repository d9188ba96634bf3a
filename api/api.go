package api

import (
	"cmp"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/api/jobs"
	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/pool"
)

// Defaults for zero Config fields.
const (
	DefaultMaxBodyBytes   = 10 << 20
	DefaultTimeout        = 10 * time.Second
	DefaultMaxTimeout     = 60 * time.Second
	DefaultMaxOutputBytes = 1 << 20
	DefaultKeepalive      = 10 * time.Second
)

// Log attribute keys, also used as gin context keys for the request log.
const (
	keyTemplate  = "template"
	keySandboxID = "sandbox_id"
	keySessionID = "session_id"
)

// Limits on list sizes in a run request.
const (
	maxFiles   = 100
	maxArgs    = 1000
	maxEnv     = 1000
	maxPathLen = 4096
)

// Config is the API's typed configuration. Zero fields take defaults.
type Config struct {
	// Pool runs the programs. Required.
	Pool *pool.Manager
	// Templates describe the pool's templates to clients. A run request's
	// language picks the template of that name, else the first template
	// of that language.
	Templates []Template
	// MaxBodyBytes caps a request body.
	MaxBodyBytes int64
	// DefaultTimeout is a run's wall-time limit when the request gives
	// none and its template's Limits.TimeoutMS is zero.
	DefaultTimeout time.Duration
	// MaxTimeout is the largest timeout a request may ask for.
	MaxTimeout time.Duration
	// MaxOutputBytes caps each output stream by default and is the largest
	// cap a request may ask for.
	MaxOutputBytes int64
	// The largest resource limits a run request may ask for in its
	// "limits" object, in place of its template's. Zero fields take the
	// DefaultMax* values.
	MaxMemoryMB  int
	MaxProcesses int
	MaxCPUs      float64
	MaxDiskMB    int
	MaxOpenFiles int
	// Kernels serves the /v1/sessions routes. Nil disables them: they
	// answer 501 not_implemented.
	Kernels *kernels.Manager
	// Jobs keeps the runs sent with an Idempotency-Key (idempotency.go).
	// Nil disables the header: such runs answer 501 not_implemented.
	Jobs *jobs.Store
	// Keepalive is how long a streamed execution may stay silent before a
	// keepalive event is sent.
	Keepalive time.Duration
	// Logger receives request logs; nil discards them.
	Logger *slog.Logger

	// Auth verifies bearer tokens on /v1; a token's sub is the tenant
	// that owns the sessions it creates. With no key configured, every
	// request acts for the anonymous tenant "". New panics if
	// Auth.Validate fails.
	Auth Auth

	// Per-tenant limits, binding the anonymous tenant too. Each takes its
	// Default* value when zero (TenantBurst: at least the rate);
	// TenantMaxRuns, TenantMaxSessions and TenantRate are off when
	// negative.
	//
	// TenantMaxRuns caps each tenant's one-shot runs in flight.
	TenantMaxRuns int
	// TenantMaxSessions caps each tenant's live sessions.
	TenantMaxSessions int
	// TenantRate is each tenant's sustained request rate per second on
	// /v1; TenantBurst is how many requests it may send at once.
	TenantRate  float64
	TenantBurst int

	// AuthFailureLimit is how many failed authentications one client
	// address (the TCP peer's IPv4 address or IPv6 /64) may have
	// outstanding; one is forgiven every AuthFailureWindow divided by the
	// limit. At the limit, the address's requests answer 429 with
	// Retry-After before their token is read. Zero fields take
	// DefaultAuthFailureLimit and DefaultAuthFailureWindow; a negative
	// limit turns the check off.
	AuthFailureLimit  int
	AuthFailureWindow time.Duration

	// Now is the clock for token times and rate limits; nil is time.Now.
	Now func() time.Time
}

// server holds the handlers' shared state.
type server struct {
	cfg       Config
	log       *slog.Logger
	pool      *pool.Manager
	kernels   *kernels.Manager  // nil when sessions are disabled
	byLang    map[string]target // language → where its runs go
	langOf    map[string]string // template → language
	runtimeOf map[string]string // template → runtime
	languages []string          // sorted, for messages
	verifier  *verifier         // nil when auth is off
	tenants   *tenants
	metrics   *metrics

	// authFailures counts failed authentications per client address.
	authFailures *authFailures
}

// target is the pool template that serves a language and its default
// run timeout.
type target struct {
	template       string
	defaultTimeout time.Duration
}

// New returns the HTTP handler for cfg. It panics if cfg.Pool is nil.
func New(cfg Config) http.Handler {
	if cfg.Pool == nil {
		panic("api.New: Config.Pool is nil")
	}
	s := newServer(cfg)
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.Use(s.logRequests, s.recoverPanics)
	r.NoRoute(s.noRoute)
	r.NoMethod(s.noMethod)

	r.GET("/healthz", s.healthz)
	r.GET("/readyz", s.readyz)
	r.GET("/v1/openapi.yaml", s.openAPI) // public, outside the /v1 group's auth and rate limit
	r.GET("/metrics", s.authenticate, s.requireScope(scopeAdmin), s.metricsHandler)
	v1 := r.Group("/v1", s.authenticate, s.limitRate)
	v1.POST("/run", s.requireScope(scopeRun), s.run)
	v1.GET("/templates", s.templates)
	s.sessionRoutes(v1.Group("/sessions", s.requireScope(scopeSessions), s.needKernels))
	s.adminRoutes(v1.Group("/admin", s.requireScope(scopeAdmin)))
	return r
}

func newServer(cfg Config) *server {
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
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
	cfg.MaxMemoryMB = cmp.Or(max(cfg.MaxMemoryMB, 0), DefaultMaxMemoryMB)
	cfg.MaxProcesses = cmp.Or(max(cfg.MaxProcesses, 0), DefaultMaxProcesses)
	cfg.MaxCPUs = cmp.Or(max(cfg.MaxCPUs, 0), DefaultMaxCPUs)
	cfg.MaxDiskMB = cmp.Or(max(cfg.MaxDiskMB, 0), DefaultMaxDiskMB)
	cfg.MaxOpenFiles = cmp.Or(max(cfg.MaxOpenFiles, 0), DefaultMaxOpenFiles)
	if cfg.Keepalive <= 0 {
		cfg.Keepalive = DefaultKeepalive
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if err := cfg.Auth.Validate(); err != nil {
		panic("api.New: " + err.Error())
	}
	cfg.TenantMaxRuns = cmp.Or(cfg.TenantMaxRuns, DefaultTenantMaxRuns)
	cfg.TenantMaxSessions = cmp.Or(cfg.TenantMaxSessions, DefaultTenantMaxSessions)
	cfg.TenantRate = cmp.Or(cfg.TenantRate, DefaultTenantRate)
	if cfg.TenantBurst <= 0 {
		cfg.TenantBurst = max(DefaultTenantBurst, int(math.Ceil(cfg.TenantRate)))
	}
	s := &server{cfg: cfg, log: cfg.Logger, pool: cfg.Pool, kernels: cfg.Kernels,
		byLang: map[string]target{}, langOf: map[string]string{}, runtimeOf: map[string]string{},
		verifier: newVerifier(cfg.Auth, cfg.Now), tenants: newTenants(cfg), authFailures: newAuthFailures(cfg),
		metrics: newMetrics(cfg.Pool, cfg.Logger)}
	for _, t := range cfg.Templates {
		s.langOf[t.Name] = t.Language
		s.runtimeOf[t.Name] = t.Runtime
		if cur, ok := s.byLang[t.Language]; !ok || (t.Name == t.Language && cur.template != t.Language) {
			timeout := cfg.DefaultTimeout
			if t.Limits.TimeoutMS > 0 {
				timeout = min(time.Duration(t.Limits.TimeoutMS)*time.Millisecond, cfg.MaxTimeout)
			}
			s.byLang[t.Language] = target{template: t.Name, defaultTimeout: timeout}
		}
	}
	for lang := range s.byLang {
		s.languages = append(s.languages, lang)
	}
	slices.Sort(s.languages)
	pooled := cfg.Pool.Templates()
	for _, t := range cfg.Templates {
		if !slices.Contains(pooled, t.Name) {
			s.log.Warn("template has no pool; its runs will fail", keyTemplate, t.Name)
		}
	}
	return s
}
