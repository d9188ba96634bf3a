package mcpdoor

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/internal/edge"
)

// Path is where the Streamable HTTP endpoint is mounted.
const Path = "/mcp"

// DefaultSessionIdle is how long an MCP session may stay silent before it
// ends, closing the Paddock sessions it opened.
const DefaultSessionIdle = 30 * time.Minute

// DefaultMaxBodyBytes caps one JSON-RPC message posted to /mcp.
const DefaultMaxBodyBytes = 10 << 20

// Options configure the door.
type Options struct {
	// Version is the server version MCP clients see.
	Version string
	// Logger receives the door's logs; nil discards them.
	Logger *slog.Logger
	// SessionIdle ends an MCP session (and closes the Paddock sessions it
	// opened) after this long without a request; zero is
	// DefaultSessionIdle.
	SessionIdle time.Duration
	// MaxBodyBytes caps a request body; zero is DefaultMaxBodyBytes.
	MaxBodyBytes int64
}

// Mount returns the function that adds /mcp and GET /v1/tools to the
// engine (for api.Config.Mounts). It fails if the tools cannot be defined.
func Mount(c Core, o Options) (func(*gin.Engine), error) {
	d, err := newDoor(c, o.Version, o.Logger)
	if err != nil {
		return nil, err
	}
	if o.SessionIdle <= 0 {
		o.SessionIdle = DefaultSessionIdle
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return d.server },
		&mcp.StreamableHTTPOptions{
			SessionTimeout:      o.SessionIdle,
			MaxRequestBodyBytes: o.MaxBodyBytes,
			Logger:              d.log,
			// The engine checks every door's Host (api.Config.Guard),
			// with the operator's allowed names.
			DisableLocalhostProtection: true,
			// A tool call's answer is one JSON body rather than an event
			// stream: the tools send no progress or log notifications, and
			// a plain body is the cheaper round trip.
			JSONResponse: true,
		})
	if c.AuthEnabled() {
		// The SDK binds an MCP session to the user that opened it: a
		// request with another tenant's token for that session id is
		// refused 403.
		h = auth.RequireBearerToken(tokenInfo, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
	}
	mcpGate := &gate{core: c, fail: writeRPCError}
	restGate := &gate{core: c, fail: writeError}
	held := &holds{core: c, server: d.server, fail: writeRPCError}
	mcpHandler := gin.WrapH(h)
	return func(e *gin.Engine) {
		e.POST(Path, mcpGate.authenticate, held.hold, mcpHandler)
		e.DELETE(Path, mcpGate.authenticate, mcpHandler)
		e.GET(Path, noStream)
		e.GET("/v1/tools", restGate.authenticate, d.schemas)
	}, nil
}

// noStream answers GET /mcp with 405, which the transport allows a server
// that sends nothing unasked: the tools send no notifications, and an
// event stream held open by every connected host would keep a graceful
// shutdown waiting for its deadline.
func noStream(c *gin.Context) {
	c.Header("Allow", "POST, DELETE")
	c.AbortWithStatusJSON(http.StatusMethodNotAllowed, gin.H{"code": "method_not_allowed",
		"message": "this MCP server sends no server-initiated messages: GET opens no event stream"})
}

// gate authenticates and admits requests through the core; refusals are
// written by fail.
type gate struct {
	core Core
	fail func(*gin.Context, error)
}

type callerCtxKey struct{}

// authenticate answers 401 (no or bad token) or 429 (too many failures
// or requests, with Retry-After) through the core, else puts the caller in
// the request's context. Like /v1, an admitted request carries the
// tenant's RateLimit-* headers when a rate is set.
func (g *gate) authenticate(c *gin.Context) {
	header := c.GetHeader("Authorization")
	caller, err := g.core.AuthenticateWith(core.PeerAddr(c.Request.RemoteAddr), Door, func() (string, error) {
		return edge.Bearer(header)
	})
	if err == nil {
		var q core.Quota
		q, err = g.core.AdmitQuota(caller)
		edge.RateLimit(c.Writer.Header(), q)
	}
	if err != nil {
		g.fail(c, err)
		return
	}
	c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), callerCtxKey{}, caller))
}

// tokenInfo hands the caller the gate authenticated to the SDK, which
// binds the MCP session to its tenant and passes it to every tool call.
func tokenInfo(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
	c, ok := ctx.Value(callerCtxKey{}).(core.Caller)
	if !ok {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{UserID: c.Tenant, Scopes: c.Scopes, Extra: map[string]any{callerKey: c}}, nil
}

// status is the HTTP status of a core error refusing a request, with its
// headers set on c.
func status(c *gin.Context, e *core.Error) int {
	if e.Kind == core.KindUnauthenticated {
		c.Header("WWW-Authenticate", `Bearer realm="paddock"`)
	}
	edge.RetryAfter(c.Writer.Header(), e.RetryAfter)
	return edge.Status(e.Kind, nil)
}

// writeError answers a core error on /v1 routes: its HTTP status and the
// {"code","message"} body of /v1.
func writeError(c *gin.Context, err error) {
	e := core.Classify(err)
	c.AbortWithStatusJSON(status(c, e), gin.H{"code": e.Code, "message": e.Message})
}

// writeRPCError answers a core error on /mcp: its HTTP status and a
// JSON-RPC error body (id null: the request was not read), which MCP
// clients show; data carries Paddock's error code.
func writeRPCError(c *gin.Context, err error) {
	e := core.Classify(err)
	code := jsonrpc.CodeInvalidRequest
	if e.Kind == core.KindInternal || e.Kind == core.KindUnavailable {
		code = jsonrpc.CodeInternalError
	}
	c.AbortWithStatusJSON(status(c, e), gin.H{"jsonrpc": "2.0", "id": nil,
		"error": gin.H{"code": code, "message": e.Code + ": " + e.Message, "data": gin.H{"code": e.Code}}})
}
