package main

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

// serverConfig is what differs between the `paddock serve` processes of
// one bench run.
type serverConfig struct {
	name      string // for messages: "pooled", "restore", "cold"…
	templates []string
	// pool is both the floor and the ceiling of every template's pool,
	// so that adaptive sizing leaves it alone; poolShipped leaves each
	// template's own floor and ceiling, with adaptive sizing as shipped.
	pool      int
	snapshots bool
	// runtime is the server's --runtime; "" leaves its default, gVisor.
	runtime string
	// shipped starts the server as `make run` does: its flags and
	// defaults, no PADDOCK_* variables from the bench's environment;
	// only the addresses and directories are the bench's own (the
	// snapshot directory stays private: see bench.Options.Snapshots). The
	// other fields but name are then ignored.
	shipped bool
	// stderr receives the server's log (nil: the bench's stderr).
	stderr io.Writer
	// extra are more serve flags, added last. Servers keep no kernel-ready
	// sandboxes (--session-kernels=0) unless extra says otherwise, so that
	// the idle sandboxes of a full pool are its ready ones.
	extra []string
}

// describe names the server and its pool and snapshot settings.
func (c serverConfig) describe() string {
	pool := "pools as shipped"
	if c.pool != poolShipped {
		pool = fmt.Sprintf("pool %d", c.pool)
	}
	snap := "snapshots off"
	if c.snapshots {
		snap = "snapshots on"
	}
	if c.runtime != "" {
		return fmt.Sprintf("%s (%s, %s, %s)", c.name, c.runtime, pool, snap)
	}
	return fmt.Sprintf("%s (%s, %s)", c.name, pool, snap)
}

// poolShipped is serverConfig.pool for the pool sizes templates ship with.
const poolShipped = -1

func (c serverConfig) args(o bench.Options, addr, state string) []string {
	args := c.serveArgs(o, addr, state)
	if o.Gofer && c.runtime != "runc" {
		args = append(args, "--gofer")
	}
	return args
}

func (c serverConfig) serveArgs(o bench.Options, addr, state string) []string {
	if c.shipped {
		return []string{"serve", "--listen=" + addr, "--cache-dir=" + o.Cache, "--state-dir=" + state,
			"--runsc=" + o.Runsc, "--agent=" + o.Agent, "--snapshot-dir=" + o.Snapshots}
	}
	args := []string{"serve", "--listen=" + addr, "--runsc=" + o.Runsc, "--agent=" + o.Agent,
		"--cache-dir=" + o.Cache, "--state-dir=" + state, "--build-rootfs=false", "--snapshot-dir=" + o.Snapshots,
		"--templates=" + strings.Join(c.templates, ","),
		"--snapshots=" + strconv.FormatBool(c.snapshots),
		"--log-level=warn", "--tenant-rate=0", "--tenant-max-runs=16"}
	if c.runtime != "" {
		args = append(args, "--runtime="+c.runtime)
	}
	if c.pool != poolShipped {
		args = append(args, "--pool-size="+strconv.Itoa(c.pool), "--pool-max="+strconv.Itoa(c.pool))
	}
	// A build older than kernel-ready sandboxes has none to turn off.
	if serveHas(o.Paddock, "session-kernels") {
		args = append(args, "--session-kernels=0")
	}
	return append(args, c.extra...)
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

// checkServeFlags fails early, naming them, when the paddock binary lacks
// flags the bench passes.
func checkServeFlags(ctx context.Context, paddock string) error {
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

// server is a `paddock serve` child process on a free loopback port.
type server struct {
	cfg   serverConfig
	cmd   *exec.Cmd
	base  string
	state string
	http  *http.Client

	exited  chan struct{} // closed when the process has exited
	waitErr error
}

func startServer(ctx context.Context, o bench.Options, cfg serverConfig) (*server, error) {
	port, err := freePort()
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
	if cfg.stderr != nil {
		cmd.Stderr = cfg.stderr
	}
	if cfg.shipped {
		cmd.Env = withoutPaddockEnv(os.Environ())
	}
	// On cancellation the server gets SIGTERM and cleans up its sandboxes.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	if err := cmd.Start(); err != nil {
		_ = os.RemoveAll(state)
		return nil, err
	}
	s := &server{cfg: cfg, cmd: cmd, base: "http://" + addr, state: state, exited: make(chan struct{}),
		http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}}
	go func() { s.waitErr = cmd.Wait(); close(s.exited) }()
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			_ = os.RemoveAll(state)
			return nil, fmt.Errorf("%s server: paddock serve exited: %v", cfg.name, s.waitErr)
		case <-ctx.Done():
			return nil, errors.Join(ctx.Err(), s.stop())
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
	return nil, errors.Join(fmt.Errorf("%s server did not become ready in 3 minutes", cfg.name), s.stop())
}

// finish keeps the server's pool metrics in rep, then stops it.
func (s *server) finish(ctx context.Context, rep *report.Report) error {
	if m, err := s.poolMetrics(context.WithoutCancel(ctx)); err == nil {
		if rep.ServerMetrics == nil {
			rep.ServerMetrics = map[string][]string{}
		}
		rep.ServerMetrics[s.cfg.name] = m
	}
	return s.stop()
}

func (s *server) stop() error {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	<-s.exited
	_ = os.RemoveAll(s.state)
	return s.waitErr
}

// poolState is one template's entry in GET /v1/templates.
type poolState struct {
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

func (s *server) pools(ctx context.Context) (map[string]poolState, error) {
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
		Templates []poolState `json:"templates"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return nil, fmt.Errorf("GET /v1/templates: %w", err)
	}
	out := make(map[string]poolState, len(list.Templates))
	for _, t := range list.Templates {
		out[t.Name] = t
	}
	return out, nil
}

// awaitFull polls the template listing until name's pool is full, so
// that no refill competes with the measured run for the two CPUs.
func (s *server) awaitFull(ctx context.Context, name string) error {
	return s.awaitListing(ctx, fmt.Sprintf("the %s pool to fill", name), func(ps map[string]poolState) bool {
		t, ok := ps[name]
		return ok && t.Pool.Ready > 0 && t.Pool.Ready >= t.Pool.Target
	})
}

// awaitQuiet polls the template listing until every template's pool is
// full and nothing is starting, neither a sandbox nor a kernel ahead of a
// session: what a measurement "on an idle machine" needs. Taking a pooled
// sandbox (a session's create, a one-shot) starts its refill, which runs
// beside whatever is measured next; a Node refill boots and takes about
// half a second of CPU.
func (s *server) awaitQuiet(ctx context.Context) error {
	return s.awaitListing(ctx, "every pool to fill and no start to run", quiet)
}

// awaitListing polls the template listing, for at most two minutes, until
// done holds of it; what says what is waited for in the error.
func (s *server) awaitListing(ctx context.Context, what string, done func(map[string]poolState) bool) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		ps, err := s.pools(ctx)
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
func quiet(ps map[string]poolState) bool {
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
func (s *server) pollInterval() time.Duration {
	if s.cfg.shipped {
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

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
