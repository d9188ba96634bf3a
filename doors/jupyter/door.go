package jupyterdoor

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/internal/edge"
)

// doorName labels the door's calls in the core's metrics and logs.
const doorName = edge.Jupyter

// Defaults of Options.
const (
	DefaultMaxMessageBytes = 16 << 20
	// DefaultPingInterval is Jupyter Server's own (30 s): a client that
	// reads its socket with a timeout (jupyter_client's gateway client,
	// 40 s) would take a quiet cell for a dead server without the pings.
	DefaultPingInterval = 30 * time.Second
	// maxJupyterSessions bounds the /api/sessions records of one tenant.
	maxJupyterSessions = 256
)

// Options configure the door.
type Options struct {
	// MaxMessageBytes caps one WebSocket message from a client;
	// 0 is DefaultMaxMessageBytes.
	MaxMessageBytes int64
	// PingInterval is how often an open kernel WebSocket is pinged;
	// 0 is DefaultPingInterval.
	PingInterval time.Duration
	// Logger; nil discards.
	Logger *slog.Logger
	// IDPrefix, lower-case hex, begins the id of every Jupyter session
	// (/api/sessions) the door makes, as kernels.Config.IDPrefix begins
	// every kernel's: a node of a gateway tier names itself in them.
	IDPrefix string
}

// door serves one core.
type door struct {
	svc  *core.Service
	log  *slog.Logger
	opts Options

	hubs     *hubs
	sessions *sessionTable
}

// Mount adds the Jupyter routes to r, served by svc.
func Mount(r *gin.Engine, svc *core.Service, opts Options) {
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if opts.PingInterval <= 0 {
		opts.PingInterval = DefaultPingInterval
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	d := &door{svc: svc, log: opts.Logger, opts: opts, hubs: newHubs(), sessions: newSessionTable()}
	g := r.Group("/api", d.authenticate)
	g.GET("", d.apiInfo)
	g.GET("/", d.apiInfo)
	g.GET("/kernelspecs", d.kernelspecs)
	g.GET("/kernelspecs/:name", d.kernelspec)
	g.GET("/kernels", d.listKernels)
	g.POST("/kernels", d.startKernel)
	g.GET("/kernels/:id", d.getKernel)
	g.DELETE("/kernels/:id", d.deleteKernel)
	g.POST("/kernels/:id/interrupt", d.interruptKernel)
	g.POST("/kernels/:id/restart", d.restartKernel)
	g.GET("/kernels/:id/channels", d.channels)
	g.GET("/sessions", d.listSessions)
	g.POST("/sessions", d.createSession)
	g.GET("/sessions/:id", d.getSession)
	g.PATCH("/sessions/:id", d.patchSession)
	g.DELETE("/sessions/:id", d.deleteSession)
}

// apiInfo answers GET /api, which clients read for the server's version.
func (d *door) apiInfo(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"version": apiVersion})
}

// apiVersion is the Jupyter Server REST API generation the door follows.
const apiVersion = "2.0.0"
