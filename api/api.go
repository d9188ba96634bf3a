package api

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/internal/webguard"
)

// Defaults for zero Config fields.
const (
	DefaultMaxBodyBytes = 10 << 20
	DefaultKeepalive    = 10 * time.Second
)

// The core's types, as the API's configuration names them.
type (
	// Template describes one sandbox template to clients.
	Template = core.Template
	// Limits are a template's resource limits as clients see them.
	Limits = core.TemplateLimits
	// Auth configures bearer-token authentication.
	Auth = core.Auth
)

// Log attribute keys, also used as gin context keys for the request log.
const (
	keyTemplate  = "template"
	keySandboxID = "sandbox_id"
	keySessionID = "session_id"
)

// Config is the API's typed configuration. Zero fields take defaults.
type Config struct {
	// Core is the service the routes call. When nil, New builds one from
	// Config (below), which is otherwise ignored.
	Core *core.Service

	// MaxBodyBytes caps a request body, and a session file read.
	MaxBodyBytes int64
	// Jobs keeps the runs sent with an Idempotency-Key (idempotency.go).
	// Nil disables the header: such runs answer 501 not_implemented.
	// *jobs.Store (files) and *jobs.SQLStore (the history database) are
	// the two.
	Jobs JobStore
	// Keepalive is how long a streamed execution may stay silent before a
	// keepalive event is sent.
	Keepalive time.Duration
	// Logger receives request logs; nil discards them.
	Logger *slog.Logger
	// Mounts add other doors' routes to the same engine (and listener),
	// each called once after the /v1 routes are registered.
	Mounts []func(*gin.Engine)
	// Guard refuses browser pages' cross-site requests and DNS-rebound
	// Hosts, on every door of the engine; nil is the guard with nothing
	// extra allowed.
	Guard *webguard.Guard

	// Config is the core's configuration, used only when Core is nil:
	// New then builds the core from it (Pool required; Logger and
	// MaxFileBytes default to the API's Logger and MaxBodyBytes).
	core.Config
}

// server holds the handlers' shared state.
type server struct {
	cfg     Config
	log     *slog.Logger
	core    *core.Service
	metrics http.Handler
}

// New returns the HTTP handler for cfg. Without cfg.Core it panics if
// cfg.Pool is nil or cfg.Auth is unusable.
func New(cfg Config) http.Handler {
	s := newServer(cfg)
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.Use(s.logRequests, s.recoverPanics, s.guardBrowsers)
	r.NoRoute(s.noRoute)
	r.NoMethod(s.noMethod)

	r.GET("/healthz", s.healthz)
	r.GET("/readyz", s.readyz)
	r.GET("/v1/openapi.yaml", s.openAPI) // public, outside the /v1 group's auth and rate limit
	r.GET("/metrics", s.authenticate, s.requireScope(core.ScopeAdmin), s.metricsHandler)
	v1 := r.Group("/v1", s.authenticate, s.limitRate)
	v1.POST("/run", s.requireScope(core.ScopeRun), s.run)
	v1.GET("/templates", s.templates)
	s.sessionRoutes(v1.Group("/sessions", s.requireScope(core.ScopeSessions), s.needKernels))
	s.adminRoutes(v1.Group("/admin", s.requireScope(core.ScopeAdmin)))
	for _, mount := range cfg.Mounts {
		mount(r)
	}
	return r
}

func newServer(cfg Config) *server {
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.Keepalive <= 0 {
		cfg.Keepalive = DefaultKeepalive
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Guard == nil {
		cfg.Guard = &webguard.Guard{}
	}
	if cfg.Core == nil {
		if cfg.Pool == nil {
			panic("api.New: Config.Pool is nil")
		}
		svc, err := core.New(coreConfig(cfg))
		if err != nil {
			panic("api.New: " + err.Error())
		}
		cfg.Core = svc
	}
	return &server{cfg: cfg, log: cfg.Logger, core: cfg.Core,
		metrics: promhttp.HandlerFor(cfg.Core.Gatherer(), promhttp.HandlerOpts{
			ErrorLog:      slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelError),
			ErrorHandling: promhttp.ContinueOnError,
		})}
}

// coreConfig is cfg's core configuration with the API's defaults.
func coreConfig(cfg Config) core.Config {
	c := cfg.Config
	if c.MaxFileBytes == 0 {
		c.MaxFileBytes = cfg.MaxBodyBytes
	}
	if c.Logger == nil {
		c.Logger = cfg.Logger
	}
	return c
}
