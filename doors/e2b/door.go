package e2bdoor

import (
	"cmp"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/internal/edge"
)

// EnvdVersion is the envd version the create answer claims. The SDKs gate
// features on it: at 0.5.7 they send no default user (≥ 0.4.0), may ask
// for stdin false (≥ 0.3.0), may close stdin (≥ 0.5.2, not served) and
// upload octet-stream bodies when asked (≥ 0.5.7); they refuse file
// metadata (< 0.6.2) and watch options Paddock lacks (< 0.6.3, 0.6.4)
// on the client side, before a request is sent.
const EnvdVersion = "0.5.7"

// The sandbox ports the SDKs address through the E2b-Sandbox-Port header.
const (
	PortEnvd        = "49983"
	PortInterpreter = "49999"
)

// Defaults for zero Config fields.
const (
	DefaultTimeout      = 300 * time.Second // E2B's default sandbox timeout
	DefaultMaxBodyBytes = 1 << 20
	DefaultMaxFileBytes = 10 << 20
)

// Log attribute and gin context keys.
const (
	keySandboxID = "sandbox_id"
	keyCaller    = "e2b.caller"
	keySandbox   = "e2b.sandbox"
)

// Config configures the door.
type Config struct {
	// Core serves every call. Required.
	Core Core
	// MaxCommandTimeout is the server's largest command timeout: a
	// command gets the client's Connect-Timeout-Ms (E2B's timeoutMs, 60 s
	// by default) up to it, or it when the client gave none. Zero leaves
	// the core's default.
	MaxCommandTimeout time.Duration
	// MaxBodyBytes caps a JSON request body; MaxFileBytes a file written
	// or read through /files.
	MaxBodyBytes int64
	MaxFileBytes int64
	// Logger receives the door's warnings; nil discards them.
	Logger *slog.Logger
}

// door holds the handlers' shared state.
type door struct {
	cfg  Config
	core Core
	log  *slog.Logger
	reg  *registry
}

// Mount returns the function that adds the E2B routes to Paddock's gin
// engine (api.Config.Mounts). It panics if cfg.Core is nil.
func Mount(cfg Config) func(*gin.Engine) {
	d := newDoor(cfg)
	return d.routes
}

func newDoor(cfg Config) *door {
	if cfg.Core == nil {
		panic("e2bdoor: Config.Core is nil")
	}
	cfg.MaxBodyBytes = cmp.Or(cfg.MaxBodyBytes, DefaultMaxBodyBytes)
	cfg.MaxFileBytes = cmp.Or(cfg.MaxFileBytes, DefaultMaxFileBytes)
	d := &door{
		cfg:  cfg,
		core: cfg.Core,
		log:  cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)),
		reg:  &registry{byID: map[string]*sandbox{}},
	}
	d.rebuild()
	return d
}

func (d *door) routes(r *gin.Engine) {
	api := r.Group("", d.authenticate)
	api.POST("/sandboxes", d.create)
	api.POST("/v2/sandboxes", d.create)
	api.GET("/sandboxes", d.listV1)
	api.GET("/v2/sandboxes", d.listV2)
	api.GET("/sandboxes/:id", d.get)
	api.DELETE("/sandboxes/:id", d.kill)
	api.POST("/sandboxes/:id/timeout", d.setTimeout)
	api.PUT("/sandboxes/:id/network", d.setNetwork)
	api.POST("/v2/sandboxes/:id/connect", d.connect)
	api.POST("/sandboxes/:id/pause", d.pause)
	api.POST("/sandboxes/:id/resume", d.resume)
	api.POST("/sandboxes/:id/fork", d.fork)
	api.GET("/sandboxes/:id/metrics", d.notServed("sandbox metrics"))

	ci := r.Group("", d.bind(PortInterpreter, fail))
	ci.POST("/execute", d.execute)
	ci.GET("/contexts", d.listContexts)
	ci.POST("/contexts", d.createContext)
	ci.DELETE("/contexts/:ctx", d.deleteContext)
	ci.POST("/contexts/:ctx/restart", d.restartContext)

	envd := r.Group("", d.bind(PortEnvd, fail))
	envd.GET("/health", d.health)
	envd.GET("/files", d.readFile)
	envd.POST("/files", d.writeFile)
	rpc := r.Group("", d.bind(PortEnvd, failConnect))
	rpc.POST("/process.Process/:method", d.process)
	rpc.POST("/filesystem.Filesystem/:method", d.filesystem)
}

// authenticate reads the API key (X-API-KEY, or a bearer token) as a
// Paddock token and charges the caller's rate.
func (d *door) authenticate(c *gin.Context) {
	token := c.GetHeader("X-API-KEY")
	if token == "" {
		token, _ = edge.Bearer(c.GetHeader("Authorization")) // none: the core says a token is missing
	}
	caller, err := d.core.Authenticate(core.PeerAddr(c.Request.RemoteAddr), token, edge.E2B)
	if err == nil {
		err = d.core.Admit(caller)
	}
	if err != nil {
		fail(c, err)
		return
	}
	c.Set(keyCaller, caller)
}

func callerOf(c *gin.Context) core.Caller {
	v, _ := c.Get(keyCaller)
	caller, _ := v.(core.Caller)
	return caller
}

// bind admits an in-sandbox call for port: the E2b-Sandbox-Id header
// names the sandbox and the access token its create answer carried
// proves the caller is its owner's client (envd: X-Access-Token; the
// interpreter: E2B-Traffic-Access-Token, or X-Access-Token). An unknown
// sandbox and a wrong token get the same not-found answer. The call then
// acts as the sandbox's owner.
func (d *door) bind(port string, failWith func(*gin.Context, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		id := c.GetHeader("E2b-Sandbox-Id")
		if id == "" {
			failWith(c, notFound("no route "+c.Request.URL.Path+": in-sandbox calls carry the E2b-Sandbox-Id header (set E2B_SANDBOX_URL to this server)"))
			return
		}
		if got := c.GetHeader("E2b-Sandbox-Port"); got != port {
			failWith(c, notFound("no route "+c.Request.URL.Path+" on sandbox port "+got))
			return
		}
		token := c.GetHeader("X-Access-Token")
		if port == PortInterpreter {
			token = cmp.Or(c.GetHeader("E2B-Traffic-Access-Token"), token)
		}
		if token == "" {
			failWith(c, unauthorized("missing access token: send the envdAccessToken (X-Access-Token) or trafficAccessToken (E2B-Traffic-Access-Token) of the create answer"))
			return
		}
		sb, ok := d.reg.get(id)
		want := ""
		if ok {
			want = sb.envdToken
			if port == PortInterpreter && !tokenMatches(token, want) {
				want = sb.trafficToken
			}
		}
		if !ok || !tokenMatches(token, want) {
			failWith(c, sandboxNotFound(id))
			return
		}
		if err := d.core.Admit(sb.owner); err != nil {
			failWith(c, err)
			return
		}
		s, ok := d.alive(c.Request.Context(), sb)
		if !ok {
			failWith(c, sandboxNotFound(id))
			return
		}
		if err := refusePaused(sb, s, c.Request.URL.Path); err != nil {
			failWith(c, err)
			return
		}
		c.Set(keySandbox, sb)
	}
}

func sandboxOf(c *gin.Context) *sandbox {
	v, _ := c.Get(keySandbox)
	return v.(*sandbox)
}

func (d *door) notServed(what string) gin.HandlerFunc {
	return func(c *gin.Context) {
		fail(c, unsupported(what+" is not supported by Paddock's E2B door"))
	}
}

// health answers envd's GET /health: 204 while the sandbox lives.
func (d *door) health(c *gin.Context) { c.Status(http.StatusNoContent) }
