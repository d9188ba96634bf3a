package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/paddock-dev/paddock/api/jobs"
	"github.com/paddock-dev/paddock/core"
	mcpdoor "github.com/paddock-dev/paddock/doors/mcp"
	"github.com/paddock-dev/paddock/egress"
	"github.com/paddock-dev/paddock/internal/webguard"
	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/rootfs"
	"github.com/paddock-dev/paddock/store"
)

// config is everything `paddock serve` needs, parsed from flags with
// PADDOCK_* environment variables as defaults.
type config struct {
	Listen   string
	CacheDir string
	StateDir string
	Runsc    string
	// RunscDebugLog is a directory for runsc's debug logs ("": none).
	RunscDebugLog string
	// Gofer serves sandbox files through a gofer process instead of EROFS images.
	Gofer        bool
	Runtime      string // "runsc" (gVisor, the default) or "runc"
	Agent        string
	Platform     string
	Templates    []string
	PoolSize     int // -1: each template's own size
	PoolMax      int // -1: each template's own ceiling
	Snapshots    bool
	SnapshotDir  string // "": <cache>/snapshots
	PoolMemoryMB int    // -1: half the host's memory; 0: no budget
	MaxSandboxes int    // 0: no cap
	MaxRefills   int
	MaxRuns      int
	// StartBudget caps the sandbox starts running at once (0: two per CPU).
	StartBudget int
	// BusyStartBudget caps them while a session's cell runs and for
	// BusyHold after (0: no cap).
	BusyStartBudget int
	BusyHold        time.Duration
	// BusyCellMax is how long one running cell keeps that cap.
	BusyCellMax time.Duration
	// QueueDeadline bounds a request's wait for a sandbox; past it: 503.
	QueueDeadline time.Duration
	MaxSessions   int
	// EgressAllow, EgressDeny and EgressHosts configure networked runs
	// (egress.go).
	EgressAllow, EgressDeny, EgressHosts string
	EgressRateMB, EgressMaxMB            int64
	EgressMaxConns                       int
	MaxLive                              int
	// EgressSecrets and EgressSecretsCA are files: the headers the proxy
	// attaches to hosts, and the roots that verify those hosts
	// (egress_secrets.go).
	EgressSecrets, EgressSecretsCA string
	// HibernateDir keeps hibernated sessions' images ("" is the state
	// dir's hibernate/, "off" none); HibernateAfter is the idle time
	// before a session hibernates (0: only when paused); HibernateBudgetMB
	// caps their disk.
	HibernateDir      string
	HibernateAfter    time.Duration
	HibernateBudgetMB int64
	// MaxSessionLifetime bounds a session's age; its ttl_s may not exceed it.
	MaxSessionLifetime time.Duration
	MaxTimeout         time.Duration
	MaxBody            int64
	MaxOutput          int64
	// Maxima of the limits a run or session request may ask for.
	MaxMemoryMB  int
	MaxProcesses int
	MaxCPUs      float64
	MaxDiskMB    int
	MaxOpenFiles int
	BuildRootfs  bool
	Mirror       string // "": the host's Debian mirror
	Suite        string // "": each template's own suite
	ShutdownWait time.Duration
	LogLevel     slog.Level

	// Runs sent with an Idempotency-Key: how long a finished one is kept,
	// and how many, and how many bytes of them, at most.
	JobTTL      time.Duration
	MaxJobs     int
	MaxJobBytes int64

	// The history database (history.go): where ("" is history.db under
	// StateDir, "off" none, postgres://… a PostgreSQL), whether code is
	// kept, and how long and how many rows (0: no bound).
	HistoryDB         string
	HistoryRecordCode bool
	HistoryMaxAge     time.Duration
	HistoryMaxRows    int64

	// SessionKernels is how many sandboxes per template are kept with
	// their kernel already open for new sessions; 0: none.
	SessionKernels int

	JWTSecretFile     string // HS256 shared secret
	JWTPublicKey      string // PEM: Ed25519 (EdDSA) or RSA (RS256)
	JWTAudience       string
	JWTIssuer         string
	InsecureNoAuth    bool // serve beyond loopback without auth
	TenantMaxRuns     int
	TenantRunQueue    int // runs waiting for a tenant's slot; 0: none
	TenantMaxSessions int
	TenantRate        float64 // requests per second; 0: no limit
	TenantBurst       int
	// TenantMaxConnections caps the MCP sessions and kernel WebSockets
	// one tenant holds; negative: no limit.
	TenantMaxConnections int

	// AllowedHosts are Host names (or host:port) accepted on loopback
	// connections besides loopback names; AllowedOrigins are the browser
	// origins (scheme://host[:port]) whose pages may send requests that
	// change state. Both are for internal/webguard.
	AllowedHosts   []string
	AllowedOrigins []string
	MCPSessionIdle time.Duration // an idle MCP session ends after this

	roleConfig // --role and the tier's flags (role.go)

	auth  core.Auth       // the keys, loaded by Validate
	guard *webguard.Guard // built by Validate
}

// registerFlags binds the flags shared by serve, doctor and rootfs.
func (c *config) registerFlags(fs *flag.FlagSet) {
	exe, _ := os.Executable()
	fs.StringVar(&c.Listen, "listen", env("PADDOCK_LISTEN", "127.0.0.1:8080"), "address to serve the API on")
	fs.StringVar(&c.CacheDir, "cache-dir", env("PADDOCK_CACHE", "/var/cache/paddock"), "cache of root filesystems and runsc builds")
	fs.StringVar(&c.StateDir, "state-dir", env("PADDOCK_STATE", "/var/lib/paddock"), "runsc state, bundles, the agent copy and idempotent runs (owned by this server)")
	fs.StringVar(&c.Runsc, "runsc", env("PADDOCK_RUNSC", ""), "runsc binary (static build; see `make runsc`)")
	fs.StringVar(&c.RunscDebugLog, "runsc-debug-log", env("PADDOCK_RUNSC_DEBUG_LOG", ""), "directory for runsc's own debug logs, one file per runsc command and sandbox process (empty: none; they grow with every sandbox, for diagnosis only)")
	fs.BoolVar(&c.Gofer, "gofer", false, "serve each gVisor sandbox's root filesystem directory through a gofer process, as runsc does by default, instead of running it on EROFS images of the root filesystem and the agent with no gofer (the images need mkfs.erofs; without it the gofer is used anyway)")
	fs.StringVar(&c.Agent, "agent", env("PADDOCK_AGENT", filepath.Join(filepath.Dir(exe), "paddock-agent")), "static paddock-agent binary")
	fs.StringVar(&c.Runtime, "runtime", env("PADDOCK_RUNTIME", "runsc"), "the runtime every sandbox runs on: runsc (gVisor, a kernel of its own; the default) or runc (plain containers on the host's kernel: for trusted code only)")
	fs.StringVar(&c.Platform, "platform", env("PADDOCK_PLATFORM", "systrap"), "gVisor platform: systrap or ptrace")
	c.Templates = splitList(env("PADDOCK_TEMPLATES", "node,python,python-slim"))
	fs.Func("templates", "comma-separated templates to serve (default node,python,python-slim)", func(v string) error {
		c.Templates = splitList(v)
		return nil
	})
	fs.IntVar(&c.PoolSize, "pool-size", -1, "floor of ready sandboxes per template (-1: the template's own pool_size)")
	fs.IntVar(&c.PoolMax, "pool-max", -1, "ceiling the pools may grow to under demand (-1: the template's own pool_max)")
	fs.IntVar(&c.SessionKernels, "session-kernels", 1, "sandboxes per template kept with their kernel already open, for new sessions (0: none, every session opens its own; a template with a pool floor of 0 keeps none)")
	fs.BoolVar(&c.Snapshots, "snapshots", true, "start sandboxes of templates that allow it by restoring a snapshot taken after the warm-up")
	fs.StringVar(&c.SnapshotDir, "snapshot-dir", env("PADDOCK_SNAPSHOT_DIR", ""), "snapshot images (default: <cache-dir>/snapshots)")
	fs.IntVar(&c.PoolMemoryMB, "pool-memory-mb", -1, "memory budget in MiB (sum of sandbox memory limits) above which pools stop refilling (-1: half the host's memory; 0: none)")
	fs.IntVar(&c.MaxSandboxes, "max-sandboxes", 64, "sandboxes alive at once above which pools stop refilling (0: no cap)")
	fs.IntVar(&c.MaxRefills, "max-refills", 1, "concurrent pool refills (starts or restores off the request path)")
	fs.IntVar(&c.MaxRuns, "max-runs", 16, "concurrent one-shot runs")
	fs.IntVar(&c.StartBudget, "start-budget", 0, "sandbox starts (restores and boots, for the pools and for requests) running at once (0: two per CPU)")
	fs.IntVar(&c.BusyStartBudget, "busy-start-budget", 1, "sandbox starts running at once while a session's cell runs and for --busy-hold after the last one, so that restores do not crowd live cells off the CPUs (0: no cap beyond --start-budget)")
	fs.DurationVar(&c.BusyHold, "busy-hold", 100*time.Millisecond, "how long --busy-start-budget outlasts the last running cell, so that cells sent back to back keep it")
	fs.DurationVar(&c.BusyCellMax, "busy-cell-max", 2*time.Second, "how long a session computing keeps --busy-start-budget, in one cell or in cells sent back to back (within --busy-hold); past it the session stops counting until it pauses, so that a long computation does not slow other requests' starts for its whole length (0: for as long as it runs)")
	fs.DurationVar(&c.QueueDeadline, "queue-deadline", pool.DefaultQueueDeadline,
		"longest a request waits for a sandbox (and a run slot); past it the answer is 503 saturated with Retry-After")
	fs.IntVar(&c.MaxSessions, "max-sessions", 1000, "open sessions, hibernated ones included; beyond it creating one answers 429")
	fs.IntVar(&c.MaxLive, "max-live-sessions", 64, "sessions awake at once, each on its sandbox; one more hibernates the least recently used idle one, or answers 429 when none is idle")
	fs.StringVar(&c.HibernateDir, "hibernate-dir", env("PADDOCK_HIBERNATE_DIR", ""), "directory for hibernated sessions' saved state (default <state-dir>/hibernate; off: sessions never hibernate)")
	fs.DurationVar(&c.HibernateAfter, "hibernate-after", 10*time.Minute, "idle time after which a session is hibernated to disk and its sandbox freed (0: only when paused)")
	fs.Int64Var(&c.HibernateBudgetMB, "hibernate-budget-mb", 20<<10, "disk in MiB hibernated sessions may take; past it the oldest are lost (0: no cap)")
	fs.DurationVar(&c.MaxSessionLifetime, "max-session-lifetime", kernels.DefaultMaxLifetime, "age at which a session ends however busy it is; also the largest ttl_s a session may ask for")
	fs.DurationVar(&c.MaxTimeout, "max-timeout", 60*time.Second, "largest wall-time limit a run or a session cell may ask for")
	fs.Int64Var(&c.MaxBody, "max-body", 10<<20, "request body limit in bytes")
	fs.Int64Var(&c.MaxOutput, "max-output", 1<<20, "output cap in bytes, per stream of a run and per session cell (default and maximum)")
	fs.IntVar(&c.MaxMemoryMB, "max-memory-mb", core.DefaultMaxMemoryMB, "largest memory limit in MiB a run or session request may ask for")
	fs.IntVar(&c.MaxProcesses, "max-processes", core.DefaultMaxProcesses, "largest process (and thread) limit a run or session request may ask for")
	fs.Float64Var(&c.MaxCPUs, "max-cpus", core.DefaultMaxCPUs, "largest CPU limit in cores a run or session request may ask for")
	fs.IntVar(&c.MaxDiskMB, "max-disk-mb", core.DefaultMaxDiskMB, "largest writable disk in MiB a run or session request may ask for")
	fs.IntVar(&c.MaxOpenFiles, "max-open-files", core.DefaultMaxOpenFiles, "largest open-files limit a run or session request may ask for")
	fs.BoolVar(&c.BuildRootfs, "build-rootfs", true, "build missing template root filesystems at start")
	fs.StringVar(&c.Mirror, "mirror", env("PADDOCK_MIRROR", ""),
		"Debian mirror to build root filesystems from, e.g. http://deb.debian.org/debian (default: the Debian mirror in the host's apt sources)")
	fs.StringVar(&c.Suite, "suite", env("PADDOCK_SUITE", ""),
		"Debian suite to build every template from in place of its own (default: each template's, bookworm; another changes the interpreter versions)")
	fs.DurationVar(&c.ShutdownWait, "shutdown-wait", 30*time.Second, "how long SIGTERM waits for in-flight runs")
	fs.DurationVar(&c.JobTTL, "job-ttl", jobs.DefaultTTL, "how long the result of a run sent with an Idempotency-Key is kept")
	fs.IntVar(&c.MaxJobs, "max-jobs", jobs.DefaultMaxJobs, "runs sent with an Idempotency-Key kept at once (the oldest finished go first)")
	fs.Int64Var(&c.MaxJobBytes, "max-job-bytes", jobs.DefaultMaxBytes, "bytes of stored idempotent runs kept on disk (the oldest finished go first)")
	fs.StringVar(&c.EgressAllow, "egress-allow", env("PADDOCK_EGRESS_ALLOW", ""), "hosts runs may ask to reach, space-separated rules host[:port[,port]] or *.suffix (empty: runs get no network)")
	fs.StringVar(&c.EgressDeny, "egress-deny", env("PADDOCK_EGRESS_DENY", ""), "hosts no run may reach whatever it asks, same syntax; always wins")
	fs.Int64Var(&c.EgressRateMB, "egress-rate-mb", egress.DefaultBytesPerSecond>>20, "MiB/s each way a networked run's proxy carries")
	fs.Int64Var(&c.EgressMaxMB, "egress-max-mb", egress.DefaultMaxBytes>>20, "MiB each way a networked run's proxy carries over the run")
	fs.IntVar(&c.EgressMaxConns, "egress-max-conns", egress.DefaultMaxConns, "upstream connections a networked run's proxy holds open at once")
	fs.StringVar(&c.EgressSecrets, "egress-secrets", env("PADDOCK_EGRESS_SECRETS", ""), "JSON file of headers the egress proxy attaches to allowed hosts, {\"host\": {\"Header\": \"value\"}}; mode 0600 or stricter")
	fs.StringVar(&c.EgressSecretsCA, "egress-secrets-ca", env("PADDOCK_EGRESS_SECRETS_CA", ""), "PEM file of the roots that verify secret hosts' certificates (empty: the system's)")
	fs.StringVar(&c.EgressHosts, "egress-hosts", "", "names the egress proxy resolves to fixed addresses, comma-separated name=address (the address guard still applies)")
	fs.StringVar(&c.HistoryDB, "history-db", env("PADDOCK_HISTORY_DB", ""),
		"the history of runs, cells, session events, failed authentications and admin actions: a SQLite file (default: history.db in --state-dir), a postgres:// URL, or off")
	fs.BoolVar(&c.HistoryRecordCode, "history-record-code", false, "keep each run's and cell's code in the history (off: only its SHA-256)")
	fs.DurationVar(&c.HistoryMaxAge, "history-max-age", store.DefaultMaxAge, "how long history records are kept (0: any age)")
	fs.Int64Var(&c.HistoryMaxRows, "history-max-rows", store.DefaultMaxRows, "history rows kept per table, the newest (0: any number)")
	_ = c.LogLevel.UnmarshalText([]byte(env("PADDOCK_LOG_LEVEL", "info")))
	fs.TextVar(&c.LogLevel, "log-level", c.LogLevel, "debug, info, warn or error")

	fs.StringVar(&c.JWTSecretFile, "jwt-hs256-secret-file", env("PADDOCK_JWT_SECRET_FILE", ""),
		"file holding the shared secret (at least 32 bytes) that HS256 tokens are signed with")
	fs.StringVar(&c.JWTPublicKey, "jwt-public-key", env("PADDOCK_JWT_PUBLIC_KEY", ""),
		"PEM public key that tokens are signed for: Ed25519 (EdDSA) or RSA (RS256)")
	fs.StringVar(&c.JWTAudience, "jwt-audience", env("PADDOCK_JWT_AUDIENCE", ""), "required aud claim of tokens")
	fs.StringVar(&c.JWTIssuer, "jwt-issuer", env("PADDOCK_JWT_ISSUER", ""), "required iss claim of tokens")
	fs.BoolVar(&c.InsecureNoAuth, "insecure-no-auth", false,
		"serve beyond loopback without authentication (anyone who reaches the port can run code)")
	fs.IntVar(&c.TenantMaxRuns, "tenant-max-runs", core.DefaultTenantMaxRuns, "concurrent one-shot runs per tenant")
	fs.IntVar(&c.TenantRunQueue, "tenant-run-queue", core.DefaultTenantRunQueue,
		"runs of a tenant at --tenant-max-runs that may wait, in arrival order and within --queue-deadline, for one of its runs to finish (0: none; 429 at once)")
	fs.IntVar(&c.TenantMaxSessions, "tenant-max-sessions", core.DefaultTenantMaxSessions, "live sessions per tenant")
	fs.IntVar(&c.TenantMaxConnections, "tenant-max-connections", core.DefaultTenantMaxConnections,
		"long-lived connections (MCP sessions, kernel WebSockets) per tenant; negative: no limit")
	fs.Float64Var(&c.TenantRate, "tenant-rate", core.DefaultTenantRate, "requests per second per tenant (0: no limit)")
	fs.IntVar(&c.TenantBurst, "tenant-burst", core.DefaultTenantBurst, "requests a tenant may send at once above its rate")

	c.AllowedHosts = splitList(env("PADDOCK_ALLOWED_HOSTS", env("PADDOCK_MCP_ALLOWED_HOSTS", "")))
	hosts := func(v string) error {
		c.AllowedHosts = splitList(v)
		return nil
	}
	fs.Func("allowed-hosts", "comma-separated Host names (or host:port) accepted on a loopback connection besides localhost: "+
		"what a reverse proxy on this machine forwards (DNS-rebinding protection refuses others; PADDOCK_ALLOWED_HOSTS)", hosts)
	fs.Func("mcp-allowed-hosts", "the old name of --allowed-hosts, which now covers every door (PADDOCK_MCP_ALLOWED_HOSTS)", hosts)
	c.AllowedOrigins = splitList(env("PADDOCK_ALLOWED_ORIGINS", ""))
	fs.Func("allowed-origins", "comma-separated browser origins (scheme://host[:port]) whose pages may send POST, PUT, PATCH or "+
		"DELETE requests; other cross-site ones are refused (PADDOCK_ALLOWED_ORIGINS)", func(v string) error {
		c.AllowedOrigins = splitList(v)
		return nil
	})
	fs.DurationVar(&c.MCPSessionIdle, "mcp-session-idle", mcpdoor.DefaultSessionIdle,
		"an MCP session silent this long ends, and the sessions it opened close")
	c.registerRoleFlags(fs)
}

func env(key, def string) string {
	if v, ok := os.LookupEnv(key); ok && v != "" {
		return v
	}
	return def
}

// Validate checks the configuration before anything starts.
// The ceilings of --max-body and --max-output.
const (
	maxBodyCeiling   = 1 << 30
	maxOutputCeiling = 64 << 20
)

func (c *config) Validate() error {
	var errs []error
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		errs = append(errs, fmt.Errorf("--listen %q: %w", c.Listen, err))
	}
	switch {
	case c.Role == roleGateway: // no runtime: checked by validateRole
	case c.Runtime != "runsc" && c.Runtime != "runc":
		errs = append(errs, fmt.Errorf("--runtime %q: want runsc or runc", c.Runtime))
	case c.Runtime == "runsc" && c.Runsc == "":
		errs = append(errs, errors.New("--runsc is required (run `make runsc` or set PADDOCK_RUNSC)"))
	}
	if c.Platform != "systrap" && c.Platform != "ptrace" {
		errs = append(errs, fmt.Errorf("--platform %q: want systrap or ptrace", c.Platform))
	}
	if len(c.Templates) == 0 {
		errs = append(errs, errors.New("--templates is empty"))
	}
	if c.MaxRuns < 1 {
		errs = append(errs, errors.New("--max-runs must be at least 1"))
	}
	if c.StartBudget < 0 || c.QueueDeadline < 100*time.Millisecond {
		errs = append(errs, errors.New("--start-budget must be at least 0 and --queue-deadline at least 100ms"))
	}
	if c.BusyStartBudget < 0 || c.BusyHold < 0 || c.BusyHold > time.Minute || c.BusyCellMax < 0 {
		errs = append(errs, errors.New("--busy-start-budget and --busy-cell-max must be at least 0 and --busy-hold between 0 and 1m"))
	}
	if c.MaxRefills < 1 || c.MaxSandboxes < 0 || c.PoolMemoryMB < -1 {
		errs = append(errs, errors.New("--max-refills must be at least 1, --max-sandboxes and --pool-memory-mb at least 0"))
	}
	if c.MaxSessions < 1 || c.MaxLive < 1 {
		errs = append(errs, errors.New("--max-sessions and --max-live-sessions must be at least 1"))
	}
	if c.EgressRateMB < 1 || c.EgressMaxMB < 1 || c.EgressMaxConns < 1 {
		errs = append(errs, errors.New("--egress-rate-mb, --egress-max-mb and --egress-max-conns must be at least 1"))
	}
	if c.HibernateAfter < 0 || c.HibernateBudgetMB < 0 {
		errs = append(errs, errors.New("--hibernate-after and --hibernate-budget-mb must be at least 0"))
	}
	if c.MaxSessionLifetime < time.Second {
		errs = append(errs, errors.New("--max-session-lifetime must be at least 1s"))
	}
	if c.JobTTL < time.Second || c.MaxJobs < 1 || c.MaxJobBytes < 1<<20 {
		errs = append(errs, errors.New("--job-ttl must be at least 1s, --max-jobs at least 1 and --max-job-bytes at least 1 MiB"))
	}
	if c.HistoryMaxAge < 0 || (c.HistoryMaxAge > 0 && c.HistoryMaxAge < time.Minute) || c.HistoryMaxRows < 0 || (c.HistoryMaxRows > 0 && c.HistoryMaxRows < 1000) {
		errs = append(errs, errors.New("--history-max-age must be 0 or at least 1m, --history-max-rows 0 or at least 1000"))
	}
	if c.MaxTimeout < time.Second {
		errs = append(errs, errors.New("--max-timeout must be at least 1s"))
	}
	// Both are held in memory whole: a request body while it is read, each
	// output stream of a run or cell until it is answered.
	if c.MaxBody < 1<<10 || c.MaxBody > maxBodyCeiling || c.MaxOutput < 1<<10 || c.MaxOutput > maxOutputCeiling {
		errs = append(errs, fmt.Errorf("--max-body must be between 1 KiB and 1 GiB and --max-output between 1 KiB and 64 MiB, got %d and %d", c.MaxBody, c.MaxOutput))
	}
	if c.MCPSessionIdle < time.Second {
		errs = append(errs, errors.New("--mcp-session-idle must be at least 1s"))
	}
	errs = append(errs, c.validateMaxLimits())
	if c.Mirror != "" {
		if err := rootfs.CheckMirror(c.Mirror); err != nil {
			errs = append(errs, fmt.Errorf("--mirror: %w", err))
		}
	}
	if c.TenantMaxRuns < 1 || c.TenantMaxSessions < 1 {
		errs = append(errs, errors.New("--tenant-max-runs and --tenant-max-sessions must be at least 1"))
	}
	if c.TenantRunQueue < 0 {
		errs = append(errs, errors.New("--tenant-run-queue must be at least 0"))
	}
	if c.TenantMaxConnections == 0 {
		errs = append(errs, errors.New("--tenant-max-connections must be at least 1, or negative for no limit"))
	}
	if c.SessionKernels < 0 {
		errs = append(errs, errors.New("--session-kernels must be at least 0"))
	}
	if c.TenantRate < 0 || c.TenantBurst < 1 {
		errs = append(errs, errors.New("--tenant-rate must be at least 0 and --tenant-burst at least 1"))
	}
	errs = append(errs, c.loadAuth(), c.validateRole())
	return errors.Join(errs...)
}

// validateMaxLimits checks that each --max-* limit admits at least the
// API's minimum, and bounds them so that they stay meaningful.
func (c *config) validateMaxLimits() error {
	var errs []error
	check := func(flag string, v, lo, hi float64) {
		if v < lo || v > hi {
			errs = append(errs, fmt.Errorf("--%s must be between %s and %s, got %s", flag, num(lo), num(hi), num(v)))
		}
	}
	check("max-memory-mb", float64(c.MaxMemoryMB), core.MinMemoryMB, 1<<20)
	check("max-processes", float64(c.MaxProcesses), core.MinProcesses, 1<<20)
	check("max-cpus", c.MaxCPUs, core.MinCPUs, 1024)
	check("max-disk-mb", float64(c.MaxDiskMB), core.MinDiskMB, 1<<24)
	check("max-open-files", float64(c.MaxOpenFiles), core.MinOpenFiles, 1<<20)
	return errors.Join(errs...)
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// loadAuth reads the configured key, if any, into c.auth. Without a key
// the API is open to anyone who reaches it, so it must listen on loopback
// unless --insecure-no-auth says otherwise.
func (c *config) loadAuth() error {
	var a core.Auth
	var err error
	switch {
	case c.JWTSecretFile != "" && c.JWTPublicKey != "":
		return errors.New("give --jwt-hs256-secret-file or --jwt-public-key, not both")
	case c.JWTSecretFile != "":
		a.HS256Secret, err = readSecret(c.JWTSecretFile)
	case c.JWTPublicKey != "":
		a.PublicKey, err = readPublicKey(c.JWTPublicKey)
	}
	if err != nil {
		return err
	}
	a.Audience, a.Issuer = c.JWTAudience, c.JWTIssuer
	if err := a.Validate(); err != nil {
		return err
	}
	switch {
	case a.Enabled() && c.InsecureNoAuth:
		return errors.New("--insecure-no-auth contradicts the JWT key given: drop one")
	case !a.Enabled() && (c.JWTAudience != "" || c.JWTIssuer != ""):
		return errors.New("--jwt-audience and --jwt-issuer need a key (--jwt-hs256-secret-file or --jwt-public-key)")
	case !a.Enabled() && !c.InsecureNoAuth && !isLoopback(c.Listen):
		return fmt.Errorf("--listen %s is reachable from other machines but no JWT key is configured: "+
			"set --jwt-hs256-secret-file or --jwt-public-key, listen on 127.0.0.1, "+
			"or pass --insecure-no-auth to serve anyone who can connect", c.Listen)
	}
	c.auth = a
	if c.guard, err = webguard.New(c.AllowedHosts, c.AllowedOrigins); err != nil {
		return fmt.Errorf("--allowed-origins: %w", err)
	}
	return nil
}

// isLoopback reports whether addr (host:port) listens on loopback only.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
