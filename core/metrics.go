package core

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/pool"
)

// latencyBuckets span 0.5 ms to 30 s in 1-2-5 steps: a pool hit lands in
// the first few, a snapshot restore near 0.1–0.2 s, a cold start near 1–2 s.
var latencyBuckets = []float64{
	0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05,
	0.1, 0.2, 0.5, 1, 2, 5, 10, 30,
}

// metrics is one service's Prometheus registry and the instruments the
// core observes, whichever door the work came through.
type metrics struct {
	reg      *prometheus.Registry
	runPhase *prometheus.HistogramVec // template, start, phase
	execute  *prometheus.HistogramVec // template, start, phase
	calls    *prometheus.CounterVec   // door, operation, outcome
}

// newMetrics registers the core's instruments, the pool's and the
// process's in reg, a new registry when nil.
func newMetrics(reg *prometheus.Registry, p *pool.Manager) *metrics {
	m := &metrics{
		runPhase: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "paddock_run_phase_seconds",
			Help:    "Phases of completed one-shot runs (queue, acquire, start, exec, total), by template and how the sandbox was made.",
			Buckets: latencyBuckets,
		}, []string{"template", "start", "phase"}),
		execute: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "paddock_execute_phase_seconds",
			Help:    "Phases of completed session executions (queue, exec, total), by template and how the session's sandbox was made.",
			Buckets: latencyBuckets,
		}, []string{"template", "start", "phase"}),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paddock_core_calls_total",
			Help: "Core operations (run, create_session, execute, …) by the door they came through and their outcome (ok, or the error code).",
		}, []string{"door", "operation", "outcome"}),
	}
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	m.reg = reg
	reg.MustRegister(m.runPhase, m.execute, m.calls, poolCollector{p},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// observeRun records the phases of a completed run.
func (m *metrics) observeRun(template string, o pool.Outcome) {
	start := string(o.Kind)
	for _, ph := range []struct {
		name string
		secs float64
	}{
		{"queue", o.Timing.Queue.Seconds()},
		{"acquire", o.Timing.Acquire.Seconds()},
		{"start", o.Timing.Start.Seconds()},
		{"exec", o.Timing.Exec.Seconds()},
		{"total", o.Timing.Total.Seconds()},
	} {
		m.runPhase.WithLabelValues(template, start, ph.name).Observe(ph.secs)
	}
}

// observeExecute records the phases of a completed execution. Acquire and
// start are not recorded: an execute never makes a sandbox.
func (m *metrics) observeExecute(x kernels.Execution, total time.Duration) {
	for _, ph := range []struct {
		name string
		d    time.Duration
	}{{"queue", x.Queue}, {"exec", x.Exec}, {"total", total}} {
		m.execute.WithLabelValues(x.Template, string(x.Start), ph.name).Observe(ph.d.Seconds())
	}
}

// call counts one operation of door ending with outcome.
func (m *metrics) call(door, operation, outcome string) {
	if door == "" {
		door = "unknown"
	}
	m.calls.WithLabelValues(door, operation, outcome).Inc()
}

// done counts one operation of door ending with err.
func (m *metrics) done(door, operation string, err error) {
	outcome := "ok"
	if err != nil {
		outcome = Classify(err).Code
	}
	m.call(door, operation, outcome)
}

// snapshotStates are the states of pool.Stats.Snapshot, each exported as
// its own series so that the current one reads 1 and the others 0.
var snapshotStates = []string{"off", "building", "ready", "failed"}

// Pool metrics, read from pool.Manager.Stats at scrape time.
var (
	poolGauges = []poolDesc{
		{newPoolDesc("paddock_pool_ready", "Ready sandboxes waiting in the pool."), func(s pool.Stats) float64 { return float64(s.Ready) }},
		{newPoolDesc("paddock_pool_target", "Ready sandboxes the pool currently aims for."), func(s pool.Stats) float64 { return float64(s.Target) }},
		{newPoolDesc("paddock_pool_floor", "Lowest target the pool may shrink to."), func(s pool.Stats) float64 { return float64(s.Floor) }},
		{newPoolDesc("paddock_pool_ceiling", "Highest target the pool may grow to."), func(s pool.Stats) float64 { return float64(s.Ceiling) }},
		{newPoolDesc("paddock_pool_in_use", "Sandboxes leased to runs and sessions."), func(s pool.Stats) float64 { return float64(s.InUse) }},
		{newPoolDesc("paddock_pool_starting", "Sandboxes being started or restored."), func(s pool.Stats) float64 { return float64(s.Starting) }},
		{newPoolDesc("paddock_pool_waiting", "Requests waiting in the admission queue for a sandbox."), func(s pool.Stats) float64 { return float64(s.Waiting) }},
		{newPoolDesc("paddock_pool_kernels_ready", "Sandboxes kept for sessions with their kernel already open."), func(s pool.Stats) float64 { return float64(s.KernelsReady) }},
		{newPoolDesc("paddock_pool_kernels_starting", "Kernel-ready sandboxes being made."), func(s pool.Stats) float64 { return float64(s.KernelsStarting) }},
	}
	poolCounters = []poolDesc{
		{newPoolDesc("paddock_pool_hits_total", "Acquires served by a ready sandbox."), func(s pool.Stats) float64 { return float64(s.Hits) }},
		{newPoolDesc("paddock_pool_misses_total", "Acquires that found no ready sandbox."), func(s pool.Stats) float64 { return float64(s.Misses) }},
		{newPoolDesc("paddock_pool_restores_total", "Sandboxes restored from the template's snapshot."), func(s pool.Stats) float64 { return float64(s.Restores) }},
		{newPoolDesc("paddock_pool_cold_starts_total", "Sandboxes started from scratch."), func(s pool.Stats) float64 { return float64(s.ColdStarts) }},
		{newPoolDesc("paddock_pool_restore_failures_total", "Restores that failed and fell back to a cold start."), func(s pool.Stats) float64 { return float64(s.RestoreFailures) }},
		{newPoolDesc("paddock_pool_start_failures_total", "Sandbox starts that failed."), func(s pool.Stats) float64 { return float64(s.StartFailures) }},
		{newPoolDesc("paddock_pool_kernel_hits_total", "Sessions that took a sandbox with its kernel already open."), func(s pool.Stats) float64 { return float64(s.KernelHits) }},
		{newPoolDesc("paddock_pool_kernel_misses_total", "Sessions that found no kernel-ready sandbox and opened their kernel themselves."), func(s pool.Stats) float64 { return float64(s.KernelMisses) }},
	}
	startBudgetDesc = prometheus.NewDesc("paddock_start_budget",
		"Sandbox starts that may run at once now: the start budget, or the smaller busy budget while a session's cell runs.", nil, nil)
	poolSnapshotDesc = prometheus.NewDesc("paddock_pool_snapshot_state",
		"State of the template's snapshot: 1 for the current state, 0 for the others.", []string{"template", "state"}, nil)
)

type poolDesc struct {
	desc  *prometheus.Desc
	value func(pool.Stats) float64
}

func newPoolDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, []string{"template"}, nil)
}

// poolCollector exports pool.Manager.Stats on every scrape.
type poolCollector struct{ p *pool.Manager }

var _ prometheus.Collector = poolCollector{}

func (pc poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range poolGauges {
		ch <- d.desc
	}
	for _, d := range poolCounters {
		ch <- d.desc
	}
	ch <- poolSnapshotDesc
	ch <- startBudgetDesc
}

func (pc poolCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(startBudgetDesc, prometheus.GaugeValue, float64(pc.p.StartBudget()))
	for _, st := range pc.p.Stats() {
		for _, d := range poolGauges {
			ch <- prometheus.MustNewConstMetric(d.desc, prometheus.GaugeValue, d.value(st), st.Template)
		}
		for _, d := range poolCounters {
			ch <- prometheus.MustNewConstMetric(d.desc, prometheus.CounterValue, d.value(st), st.Template)
		}
		known := false
		for _, state := range snapshotStates {
			v := 0.0
			if state == st.Snapshot {
				v, known = 1, true
			}
			ch <- prometheus.MustNewConstMetric(poolSnapshotDesc, prometheus.GaugeValue, v, st.Template, state)
		}
		if !known && st.Snapshot != "" {
			ch <- prometheus.MustNewConstMetric(poolSnapshotDesc, prometheus.GaugeValue, 1, st.Template, st.Snapshot)
		}
	}
}
