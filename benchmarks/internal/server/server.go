package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
)

// Config is what differs between the `paddock serve` processes of
// one bench run.
type Config struct {
	Name      string // for messages: "pooled", "restore", "cold"…
	Templates []string
	// Pool is both the floor and the ceiling of every template's pool,
	// so that adaptive sizing leaves it alone; PoolShipped leaves each
	// template's own floor and ceiling, with adaptive sizing as shipped.
	Pool      int
	Snapshots bool
	// Runtime is the server's --runtime; "" leaves its default, gVisor.
	Runtime string
	// Shipped starts the server as `make run` does: its flags and
	// defaults, no PADDOCK_* variables from the bench's environment;
	// only the addresses and directories are the bench's own (the
	// snapshot directory stays private: see bench.Options.Snapshots). The
	// other fields but name are then ignored.
	Shipped bool
	// Stderr receives the server's log (nil: the bench's stderr).
	Stderr io.Writer
	// Extra are more serve flags, added last. Servers keep no kernel-ready
	// sandboxes (--session-kernels=0) unless extra says otherwise, so that
	// the idle sandboxes of a full pool are its ready ones.
	Extra []string
	// Wrap, when set, wraps the transport the bench's client talks to the
	// server with: to add a token or a node's gateway credential.
	Wrap func(http.RoundTripper) http.RoundTripper
}

// Describe names the server and its pool and snapshot settings.
func (c Config) Describe() string {
	pool := "pools as shipped"
	if c.Pool != PoolShipped {
		pool = fmt.Sprintf("pool %d", c.Pool)
	}
	snap := "snapshots off"
	if c.Snapshots {
		snap = "snapshots on"
	}
	if c.Runtime != "" {
		return fmt.Sprintf("%s (%s, %s, %s)", c.Name, c.Runtime, pool, snap)
	}
	return fmt.Sprintf("%s (%s, %s)", c.Name, pool, snap)
}

// PoolShipped is Config.Pool for the pool sizes templates ship with.
const PoolShipped = -1

func (c Config) args(o bench.Options, addr, state string) []string {
	args := c.serveArgs(o, addr, state)
	if o.Gofer && c.Runtime != "runc" {
		args = append(args, "--gofer")
	}
	return args
}

func (c Config) serveArgs(o bench.Options, addr, state string) []string {
	if c.Shipped {
		return []string{"serve", "--listen=" + addr, "--cache-dir=" + o.Cache, "--state-dir=" + state,
			"--runsc=" + o.Runsc, "--agent=" + o.Agent, "--snapshot-dir=" + o.Snapshots}
	}
	args := []string{"serve", "--listen=" + addr, "--runsc=" + o.Runsc, "--agent=" + o.Agent,
		"--cache-dir=" + o.Cache, "--state-dir=" + state, "--build-rootfs=false", "--snapshot-dir=" + o.Snapshots,
		"--templates=" + strings.Join(c.Templates, ","),
		"--snapshots=" + strconv.FormatBool(c.Snapshots),
		"--log-level=warn", "--tenant-rate=0", "--tenant-max-runs=16"}
	if c.Runtime != "" {
		args = append(args, "--runtime="+c.Runtime)
	}
	if c.Pool != PoolShipped {
		args = append(args, "--pool-size="+strconv.Itoa(c.Pool), "--pool-max="+strconv.Itoa(c.Pool))
	}
	// A build older than kernel-ready sandboxes has none to turn off.
	if serveHas(o.Paddock, "session-kernels") {
		args = append(args, "--session-kernels=0")
	}
	return append(args, c.Extra...)
}

// serveFlags are the flags of `paddock serve` the bench relies on.
var serveFlags = []string{"listen", "runsc", "agent", "cache-dir", "state-dir", "build-rootfs", "snapshot-dir",
	"templates", "pool-size", "pool-max", "snapshots", "log-level", "tenant-rate", "tenant-max-runs"}

// serveHelp caches each paddock binary's `serve -h` text.
var serveHelp sync.Map

// serveHas reports whether paddock's serve command has flag.
func serveHas(paddock, flag string) bool {
	out, ok := serveHelp.Load(paddock)
	if !ok {
		// -h prints the flags and exits non-zero; only the text matters.
		b, _ := exec.Command(paddock, "serve", "-h").CombinedOutput()
		out, _ = serveHelp.LoadOrStore(paddock, string(b))
	}
	text := out.(string)
	return strings.Contains(text, "-"+flag+" ") || strings.Contains(text, "-"+flag+"\n")
}

// ServeHas reports whether paddock's serve command has flag, for the
// phases that need a flag the others do not.
func ServeHas(paddock, flag string) bool { return serveHas(paddock, flag) }

// CheckServeFlags fails early, naming them, when the paddock binary lacks
// flags the bench passes.
func CheckServeFlags(ctx context.Context, paddock string) error {
	var missing []string
	for _, f := range serveFlags {
		if !serveHas(paddock, f) {
			missing = append(missing, "--"+f)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s serve lacks %s (rebuild it with `make build`)", paddock, strings.Join(missing, ", "))
	}
	return nil
}

// Server is a `paddock serve` child process on a free loopback port.
type Server struct {
	cfg   Config
	cmd   *exec.Cmd
	base  string
	state string
	http  *http.Client

	exited  chan struct{} // closed when the process has exited
	waitErr error
}

// URL is the server's base URL: http://127.0.0.1:port.
func (s *Server) URL() string { return s.base }

// Client is the HTTP client the bench talks to the server with.
func (s *Server) Client() *http.Client { return s.http }

// StateDir is the server's --state-dir, private to it.
func (s *Server) StateDir() string { return s.state }

// PID is the server's process ID.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Config is what the server was started with.
func (s *Server) Config() Config { return s.cfg }

// Start starts `paddock serve` with cfg on a free loopback port, its
// state in a directory of its own, and waits until it is ready.
func Start(ctx context.Context, o bench.Options, cfg Config) (*Server, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	state, err := os.MkdirTemp("", "paddock-bench-")
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.CommandContext(ctx, o.Paddock, cfg.args(o, addr, state)...)
	cmd.Stderr = os.Stderr
	if cfg.Stderr != nil {
		cmd.Stderr = cfg.Stderr
	}
	if cfg.Shipped {
		cmd.Env = withoutPaddockEnv(os.Environ())
	}
	// On cancellation the server gets SIGTERM and cleans up its sandboxes.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	if err := cmd.Start(); err != nil {
		_ = os.RemoveAll(state)
		return nil, err
	}
	var rt http.RoundTripper = &http.Transport{MaxIdleConnsPerHost: 8}
	if cfg.Wrap != nil {
		rt = cfg.Wrap(rt)
	}
	s := &Server{cfg: cfg, cmd: cmd, base: "http://" + addr, state: state, exited: make(chan struct{}),
		http: &http.Client{Transport: rt}}
	go func() { s.waitErr = cmd.Wait(); close(s.exited) }()
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			_ = os.RemoveAll(state)
			return nil, fmt.Errorf("%s server: paddock serve exited: %v", cfg.Name, s.waitErr)
		case <-ctx.Done():
			return nil, errors.Join(ctx.Err(), s.Stop())
		default:
		}
		resp, err := s.http.Get(s.base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil, errors.Join(fmt.Errorf("%s server did not become ready in 3 minutes", cfg.Name), s.Stop())
}

// Finish keeps the server's pool metrics in rep, then stops it.
func (s *Server) Finish(ctx context.Context, rep *report.Report) error {
	if m, err := s.PoolMetrics(context.WithoutCancel(ctx)); err == nil {
		if rep.ServerMetrics == nil {
			rep.ServerMetrics = map[string][]string{}
		}
		rep.ServerMetrics[s.cfg.Name] = m
	}
	return s.Stop()
}

// Stop ends the server (SIGTERM: it cleans up its sandboxes), waits for
// it and removes its state directory.
func (s *Server) Stop() error {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	<-s.exited
	_ = os.RemoveAll(s.state)
	return s.waitErr
}

// PoolState is one template's entry in GET /v1/templates.
type PoolState struct {
	Name     string `json:"name"`
	Language string `json:"language"`
	// Limits are the template's resource limits, compared as they come.
	Limits json.RawMessage `json:"limits"`
	Pool   struct {
		Target   int `json:"target"`
		Ready    int `json:"ready"`
		InUse    int `json:"in_use"`
		Starting int `json:"starting"`
		// KernelsStarting counts kernels being opened ahead of sessions.
		KernelsStarting int    `json:"kernels_starting"`
		Snapshot        string `json:"snapshot"`
		Restores        uint64 `json:"restores"`
	} `json:"pool"`
}

// Pools reads GET /v1/templates: each template's pool, by name.
func (s *Server) Pools(ctx context.Context) (map[string]PoolState, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/v1/templates", nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var list struct {
		Templates []PoolState `json:"templates"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return nil, fmt.Errorf("GET /v1/templates: %w", err)
	}
	out := make(map[string]PoolState, len(list.Templates))
	for _, t := range list.Templates {
		out[t.Name] = t
	}
	return out, nil
}

// AwaitFull polls the template listing until name's pool is full, so
// that no refill competes with the measured run for the two CPUs.
func (s *Server) AwaitFull(ctx context.Context, name string) error {
	return s.awaitListing(ctx, fmt.Sprintf("the %s pool to fill", name), func(ps map[string]PoolState) bool {
		t, ok := ps[name]
		return ok && t.Pool.Ready > 0 && t.Pool.Ready >= t.Pool.Target
	})
}

// AwaitQuiet polls the template listing until every template's pool is
// full and nothing is starting, neither a sandbox nor a kernel ahead of a
// session: what a measurement "on an idle machine" needs. Taking a pooled
// sandbox (a session's create, a one-shot) starts its refill, which runs
// beside whatever is measured next; a Node refill boots and takes about
// half a second of CPU.
func (s *Server) AwaitQuiet(ctx context.Context) error {
	return s.awaitListing(ctx, "every pool to fill and no start to run", quiet)
}

// awaitListing polls the template listing, for at most two minutes, until
// done holds of it; what says what is waited for in the error.
func (s *Server) awaitListing(ctx context.Context, what string, done func(map[string]PoolState) bool) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		ps, err := s.Pools(ctx)
		if err != nil {
			return err
		}
		if done(ps) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-time.After(s.pollInterval()):
		}
	}
}

// quiet reports whether every pool in ps is full with nothing starting.
func quiet(ps map[string]PoolState) bool {
	for _, t := range ps {
		if t.Pool.Ready < t.Pool.Target || t.Pool.Starting > 0 || t.Pool.KernelsStarting > 0 {
			return false
		}
	}
	return true
}

// pollInterval is how often the bench polls the server's listing: well
// under the shipped per-tenant request rate (20/s) on a server as
// shipped, whose limit the measured runs share.
func (s *Server) pollInterval() time.Duration {
	if s.cfg.Shipped {
		return 100 * time.Millisecond
	}
	return 20 * time.Millisecond
}

// withoutPaddockEnv is env less its PADDOCK_* variables, which would
// change a server's defaults.
func withoutPaddockEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PADDOCK_") {
			out = append(out, kv)
		}
	}
	return out
}

// FreePort is a TCP port free on loopback a moment ago.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
