package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paddock-dev/paddock/api"
	"github.com/paddock-dev/paddock/api/jobs"
	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/rootfs"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/store"
	"github.com/paddock-dev/paddock/templates"
)

// stack is the wired server: runtime → pool → kernels → core → API (and
// the doors mounted on it), and the API's job store.
type stack struct {
	Runtime runner.Runtime
	Pool    *pool.Manager
	Kernels *kernels.Manager
	Core    *core.Service
	Jobs    jobStore
	History *store.Store // nil with --history-db=off
	Handler http.Handler

	log         *slog.Logger
	stopJanitor context.CancelFunc
	janitorDone chan struct{}
	stopBuilds  context.CancelFunc
	builds      sync.WaitGroup // root filesystems built while serving (late.go)
}

// orphanSweepEvery is how often the server destroys sandboxes under its
// root that another server instance made (see janitor).
const orphanSweepEvery = 30 * time.Second

// Close ends every session, then destroys every sandbox (the pool waits for
// leased ones, so the kernels go first), then destroys whatever else is
// left in the runtime's state (when it is a runner.Reaper), releases the
// runtime's own host state (when it is an io.Closer) and stops the job
// store's collector.
func (st *stack) Close(ctx context.Context) error {
	st.stopJanitor()
	<-st.janitorDone
	st.stopBuilds()
	st.builds.Wait()
	kerr := st.Kernels.Close(ctx)
	perr := st.Pool.Close(ctx)
	// Even past the drain deadline: nothing may outlive the server.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	var cerr, rerr error
	if r, ok := st.Runtime.(runner.Reaper); ok {
		var n int
		n, cerr = r.Cleanup(cctx)
		if n > 0 {
			st.log.Warn("destroyed sandboxes left under the runtime's root at shutdown", "count", n)
		}
	}
	st.Jobs.Close()
	if c, ok := st.Runtime.(io.Closer); ok {
		rerr = c.Close()
	}
	herr := closeHistory(cctx, st.History) // after the kernels: their last events are in it
	return errors.Join(kerr, perr, cerr, rerr, herr)
}

// janitor destroys, every orphanSweepEvery until ctx ends, the sandboxes
// under the runtime's root that this instance did not make. Cleanup at
// start reaps what an earlier server left, but a runsc run or restore
// that server began can in principle finish after that; this catches it.
// A runtime that is no runner.Reaper leaves it nothing to do.
func (st *stack) janitor(ctx context.Context, instance string) {
	defer close(st.janitorDone)
	r, ok := st.Runtime.(runner.Reaper)
	if !ok {
		return
	}
	tick := time.NewTicker(orphanSweepEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		n, err := r.ReapOthers(ctx, "instance", instance)
		if err != nil && ctx.Err() == nil {
			st.log.Error("reaping sandboxes of other server instances", "err", err)
		}
		if n > 0 {
			st.log.Warn("reaped sandboxes another server instance left under this root", "count", n)
		}
	}
}

// buildStack resolves templates and their root filesystems, reaps orphans
// of an earlier run, and starts the pools. With --build-rootfs, a template
// whose root filesystem is missing is built while the server serves the
// others (late.go).
func buildStack(ctx context.Context, cfg *config, logger *slog.Logger) (*stack, error) {
	b := cfg.builder(os.Stderr, logger)
	return buildStackWith(ctx, cfg, logger, b.Lookup, b.Ensure)
}

// buildStackWith is buildStack with the root filesystem builder's Lookup
// and Ensure given: tests hold a build back.
func buildStackWith(ctx context.Context, cfg *config, logger *slog.Logger,
	lookup func(templates.Template) (rootfs.Image, error), ensure ensureFunc) (*stack, error) {
	var tmpls []templates.Template
	for _, name := range cfg.Templates {
		t, err := cfg.template(name)
		if err != nil {
			return nil, err
		}
		tmpls = append(tmpls, t)
	}
	rt, err := newRuntime(cfg, logger)
	if err != nil {
		return nil, fmt.Errorf("preparing runtime: %w", err)
	}
	if r, ok := rt.(runner.Reaper); ok {
		if n, err := r.Cleanup(ctx); err != nil {
			return nil, fmt.Errorf("reaping orphan sandboxes: %w", err)
		} else if n > 0 {
			logger.Warn("reaped orphan sandboxes from an earlier run", "count", n)
		}
	}
	instance := fmt.Sprintf("%d-%d", os.Getpid(), time.Now().Unix())
	imgs, late, err := lookupImages(lookup, tmpls, cfg.BuildRootfs)
	if err != nil {
		return nil, fmt.Errorf("%w (run `paddock rootfs`)", err)
	}
	var poolTemplates []pool.Template
	var infos []core.Template
	for i, t := range tmpls {
		img := imgs[i]
		rootfsID := ""
		if !late[i] {
			rootfsID = imageID(img)
		}
		size, ceiling := t.PoolSize, t.PoolMax
		if cfg.PoolSize >= 0 {
			size = cfg.PoolSize
		}
		if cfg.PoolMax >= 0 {
			ceiling = cfg.PoolMax
		}
		poolTemplates = append(poolTemplates, pool.Template{
			Name:     t.Name,
			Size:     size,
			Max:      max(size, ceiling),
			Snapshot: t.Snapshot && cfg.Snapshots,
			Kernels:  sessionKernels(cfg.SessionKernels, size),
			Deferred: late[i],
			Spec: runner.Spec{
				Template: t.Name,
				Language: t.Language,
				Rootfs:   img.Path,
				RootfsID: rootfsID,
				Warmup:   t.Warmup,
				Limits:   limitsOf(t),
				Labels:   map[string]string{"instance": instance, "template": t.Name},
			},
		})
		infos = append(infos, withRuntime(apiTemplate(t, img), cfg.Runtime))
	}
	budget, err := memoryBudget(cfg.PoolMemoryMB)
	if err != nil {
		return nil, err
	}
	p, err := pool.New(rt, pool.Config{
		Templates:       poolTemplates,
		MaxRuns:         cfg.MaxRuns,
		MaxSandboxes:    cfg.MaxSandboxes,
		MemoryBudget:    budget,
		MaxRefills:      cfg.MaxRefills,
		StartBudget:     cfg.StartBudget,
		BusyStartBudget: cfg.BusyStartBudget,
		BusyHold:        cfg.BusyHold,
		BusyCellMax:     cfg.BusyCellMax,
		QueueDeadline:   cfg.QueueDeadline,
	}, logger)
	if err != nil {
		return nil, err
	}
	// The history and the core's metrics share /metrics' registry.
	reg := prometheus.NewRegistry()
	hist, err := openHistory(ctx, cfg, reg, logger)
	if err != nil {
		return nil, errors.Join(err, p.Close(context.WithoutCancel(ctx)))
	}
	js, err := openJobs(ctx, cfg, hist, logger)
	if err != nil {
		return nil, errors.Join(err, p.Close(context.WithoutCancel(ctx)), closeHistory(ctx, hist))
	}
	p.Start()
	// Cells obey the server's maxima as runs do.
	k, err := kernels.New(p, kernels.Config{
		MaxSessions: cfg.MaxSessions,
		MaxLive:     cfg.MaxLive,
		MaxLifetime: cfg.MaxSessionLifetime,
		MaxTimeout:  cfg.MaxTimeout,
		MaxOutput:   cfg.MaxOutput,
		OnEnd:       core.SessionEndRecorder(hist, nil),
		// Hibernation.
		HibernateDir:    hibernateDir(*cfg),
		HibernateAfter:  cfg.HibernateAfter,
		HibernateBudget: cfg.HibernateBudgetMB << 20,
		Catalog:         sessionCatalog(*cfg, hist),
		IDPrefix:        cfg.idPrefix(),
	}, logger)
	if err != nil {
		return nil, errors.Join(err, p.Close(context.WithoutCancel(ctx)), closeHistory(ctx, hist))
	}
	k.Start()
	js.Start()
	eg, err := egressConfig(cfg, reg, logger)
	if err != nil {
		return nil, errors.Join(err, k.Close(context.WithoutCancel(ctx)), p.Close(context.WithoutCancel(ctx)), closeHistory(ctx, hist))
	}
	// One core serves every door.
	svc, err := core.New(core.Config{
		Egress:         eg,
		Pool:           p,
		Kernels:        k,
		Templates:      infos,
		MaxTimeout:     cfg.MaxTimeout,
		MaxOutputBytes: cfg.MaxOutput,
		MaxMemoryMB:    cfg.MaxMemoryMB,
		MaxProcesses:   cfg.MaxProcesses,
		MaxCPUs:        cfg.MaxCPUs,
		MaxDiskMB:      cfg.MaxDiskMB,
		MaxOpenFiles:   cfg.MaxOpenFiles,
		MaxFileBytes:   cfg.MaxBody,
		Logger:         logger,
		Registry:       reg,
		Store:          hist,

		Auth:              cfg.auth,
		TenantMaxRuns:     cfg.TenantMaxRuns,
		TenantRunQueue:    tenantRunQueue(cfg.TenantRunQueue),
		TenantMaxSessions: cfg.TenantMaxSessions,
		TenantRate:        tenantRate(cfg.TenantRate),
		TenantBurst:       cfg.TenantBurst,

		TenantMaxConnections: cfg.TenantMaxConnections,
	})
	if err != nil {
		return nil, errors.Join(err, k.Close(context.WithoutCancel(ctx)), p.Close(context.WithoutCancel(ctx)), closeHistory(ctx, hist))
	}
	h := api.New(api.Config{
		Core:         svc,
		MaxBodyBytes: cfg.MaxBody,
		Logger:       logger,
		Jobs:         js,
		Mounts:       mounts(svc, cfg, logger),
		Guard:        cfg.guard,
	})
	st := &stack{Runtime: rt, Pool: p, Kernels: k, Core: svc, Jobs: js, History: hist, Handler: h, log: logger, janitorDone: make(chan struct{})}
	jctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	st.stopJanitor = stop
	go st.janitor(jctx, instance)
	bctx, stopBuilds := context.WithCancel(context.WithoutCancel(ctx))
	st.stopBuilds = stopBuilds
	st.buildLate(bctx, ensure, tmpls, late)
	return st, nil
}

// jobStore is a store of idempotent runs: the API's part and the
// collector's.
type jobStore interface {
	api.JobStore
	Start()
	Close()
}

// openJobs opens the store of idempotent runs: the history database's
// jobs table when there is one, else files under the state directory.
// The runs an earlier server left in flight become interrupted.
func openJobs(ctx context.Context, cfg *config, hist *store.Store, logger *slog.Logger) (jobStore, error) {
	jc := jobs.Config{
		Dir:      filepath.Join(cfg.StateDir, "jobs"),
		TTL:      cfg.JobTTL,
		MaxJobs:  cfg.MaxJobs,
		MaxBytes: cfg.MaxJobBytes,
		Logger:   logger,
	}
	var (
		js    jobStore
		rec   jobs.Recovery
		err   error
		where = jc.Dir
	)
	if hist != nil {
		dialect := jobs.DialectSQLite
		if hist.Driver() == store.DriverPostgres {
			dialect = jobs.DialectPostgres
		}
		js, rec, err = jobs.OpenSQL(ctx, hist.DB(), dialect, jc)
		where = "history database"
	} else {
		js, rec, err = jobs.Open(jc)
	}
	if err != nil {
		return nil, fmt.Errorf("opening the job store: %w", err)
	}
	if rec.Interrupted > 0 {
		logger.Warn("marked idempotent runs left in flight by an earlier server as interrupted", "count", rec.Interrupted)
	}
	if rec != (jobs.Recovery{}) {
		logger.Info("loaded idempotent runs", "at", where, "kept", rec.Loaded, "expired", rec.Expired,
			"evicted", rec.Evicted, "unreadable", rec.Unreadable)
	}
	return js, nil
}

// memoryBudget turns --pool-memory-mb into bytes; -1 is half the host's
// memory.
func memoryBudget(mb int) (int64, error) {
	if mb >= 0 {
		return int64(mb) << 20, nil
	}
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return 0, fmt.Errorf("reading the host's memory size: %w", err)
	}
	return int64(si.Totalram) * int64(si.Unit) / 2, nil
}

// tenantRate maps --tenant-rate to core.Config: 0 (no limit) is negative
// there, where zero means the default.
func tenantRate(perSecond float64) float64 {
	if perSecond == 0 {
		return -1
	}
	return perSecond
}

// tenantRunQueue maps --tenant-run-queue to core.Config likewise: 0 (no
// queue) is negative there.
func tenantRunQueue(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

func limitsOf(t templates.Template) runner.Limits {
	return runner.Limits{
		MemoryBytes: int64(t.Limits.MemoryMB) << 20,
		Processes:   t.Limits.Processes,
		CPUs:        t.Limits.CPUs,
		DiskBytes:   int64(t.Limits.DiskMB) << 20,
		OpenFiles:   t.Limits.OpenFiles,
	}
}

func apiTemplate(t templates.Template, img rootfs.Image) core.Template {
	var egress []string
	if t.Network != nil {
		egress = append([]string{}, t.Network.Allow...)
	}
	return core.Template{
		Egress:       egress,
		Name:         t.Name,
		Language:     t.Language,
		Description:  t.Description,
		Versions:     img.Versions,
		SnapshotNote: t.SnapshotNote,
		WarmImports:  t.WarmImports,
		DefaultFor:   t.DefaultFor,
		Limits: core.TemplateLimits{
			MemoryMB:  t.Limits.MemoryMB,
			Processes: t.Limits.Processes,
			CPUs:      t.Limits.CPUs,
			DiskMB:    t.Limits.DiskMB,
			OpenFiles: t.Limits.OpenFiles,
			TimeoutMS: t.Limits.TimeoutMS,
		},
	}
}

// sessionKernels is how many kernel-ready sandboxes a template with pool
// floor size keeps: none when its floor is zero, since such a template
// keeps nothing while idle.
func sessionKernels(n, size int) int {
	if size == 0 {
		return 0
	}
	return n
}

// sessionCatalog is where the records of open sessions are kept for the
// next server: the history database's sessions table when there is one,
// else files under the state dir; none when sessions never hibernate.
func sessionCatalog(cfg config, hist *store.Store) kernels.Catalog {
	dir := hibernateDir(cfg)
	switch {
	case dir == "":
		return nil
	case hist != nil:
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
		return store.SessionCatalog{Store: hist, Home: dir}
	}
	return kernels.FileCatalog{Dir: filepath.Join(cfg.StateDir, "sessions")}
}

// hibernateDir is where hibernated sessions' images go: --hibernate-dir,
// by default the state dir's hibernate/, or none with "off".
func hibernateDir(cfg config) string {
	switch cfg.HibernateDir {
	case "off":
		return ""
	case "":
		return filepath.Join(cfg.StateDir, "hibernate")
	}
	return cfg.HibernateDir
}
