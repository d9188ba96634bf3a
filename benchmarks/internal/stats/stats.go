package stats

import (
	"slices"
	"time"
)

// Modes of a latency row: how the program got an interpreter.
const (
	ModeNative     = "native rootfs"     // the template's interpreter, unsandboxed: the baseline
	ModeHost       = "native host"       // the host's interpreter at the same path
	ModeRaw        = "raw runsc run"     // `runsc run` + delete of the bare interpreter, Paddock's limits, no Paddock
	ModeRawRestore = "raw runsc restore" // `runsc restore` + delete of a warmed-up interpreter, Paddock's limits, no Paddock
	ModeCold       = "cold"              // Paddock, no pool, no snapshot: started on the request path
	ModeRestore    = "restore"           // Paddock, no pool: restored from the snapshot on the request path
	ModePool       = "warm pool idle"    // Paddock, taken from a full, idle pool
	ModeBusy       = "warm pool busy"    // Paddock, runs back to back at a steady rate, pool at its floor
	ModeSession    = "session"           // execute in an open session, HTTP round trip
	// The same on the runc runtime (plain containers, the host's kernel),
	// for the "gVisor ÷ runc" headlines.
	ModeRuncCold    = "runc cold"           // runc, no pool: started on the request path
	ModeRuncPool    = "runc warm pool idle" // runc, taken from a full, idle pool
	ModeRuncSession = "runc session"        // execute in an open session on runc
)

// The Jupyter door's cell round trip (`x + 1` through @jupyterlab/services)
// against Paddock and against a native, unsandboxed Jupyter Server with
// Debian's ipykernel, driven by the same client in the same run. The
// native stack runs twice: as Debian ships it, and with Nagle's algorithm
// off on the server's sockets (stock tornado leaves it on for a kernel
// WebSocket, and a small message then waits for the client's delayed ACK).
const (
	ModeJupyterPaddock = "jupyter paddock"        // @jupyterlab/services → Paddock's Jupyter door → a gVisor session
	ModeJupyterNative  = "jupyter native"         // the same client → Debian's Jupyter Server + ipykernel, no sandbox
	ModeJupyterNoDelay = "jupyter native nodelay" // the same, TCP_NODELAY on the server's sockets (jupyter_nodelay.py)
	JupyterProbe       = "x + 1"
)

// The E2B door's overhead: an E2B sandbox created and its first cell's
// result read, against the same work on /v1 (a session created, one
// execute), on one server, alternating, each from a full pool.
const (
	ModeE2B       = "e2b door"
	ModeREST      = "/v1 rest"
	ProbeE2BFirst = "create → first result"
)

// Sample is one timed attempt. Server fields are empty for native and raw
// runsc samples.
type Sample struct {
	D time.Duration
	// Start is the server's start kind: pool, restore or cold.
	Start string
	// Counted is false for an attempt whose start kind was not the row's:
	// it is kept in the raw output but not in the percentiles.
	Counted bool
	Timing  *Timing
	// Delete is the part of D a raw runsc sample spent in `runsc delete`.
	Delete time.Duration
}

// Timing is the phase breakdown a run response carries.
type Timing struct {
	QueueMS   float64 `json:"queue_ms"`
	AcquireMS float64 `json:"acquire_ms"`
	StartMS   float64 `json:"start_ms"`
	ExecMS    float64 `json:"exec_ms"`
	TotalMS   float64 `json:"total_ms"`
}

// Row is one latency measurement: a language, a probe and a mode.
type Row struct {
	Lang, Probe, Mode string
	Samples           []Sample
	// Mismatches counts attempts whose start kind was not the row's mode.
	Mismatches int
	// Note explains a row without samples ("n/a: not snapshotted").
	Note string
}

// Counted returns the durations that count towards the percentiles.
func (r Row) Counted() []time.Duration {
	var out []time.Duration
	for _, s := range r.Samples {
		if s.Counted {
			out = append(out, s.D)
		}
	}
	return out
}

// P50 is the median of the counted durations.
func (r Row) P50() time.Duration { return Percentile(r.Counted(), 0.5) }

// ServerStartP50 is the p50 of the server's own start phase (restore or
// cold start on the request path; zero for a pool hit), or -1 without
// server timings.
func (r Row) ServerStartP50() float64 {
	var v []float64
	for _, s := range r.Samples {
		if s.Counted && s.Timing != nil {
			v = append(v, s.Timing.StartMS)
		}
	}
	if len(v) == 0 {
		return -1
	}
	slices.Sort(v)
	return v[nearestRank(len(v), 0.5)]
}

// Percentile returns the p-quantile (0 ≤ p ≤ 1) of s by the nearest rank
// on the sorted samples; 0 for no samples. s is not modified.
func Percentile(s []time.Duration, p float64) time.Duration {
	if len(s) == 0 {
		return 0
	}
	c := slices.Clone(s)
	slices.Sort(c)
	return c[nearestRank(len(c), p)]
}

// supports reports whether n samples support the p-quantile: at least
// 1/(1-p) of them, so that at least one sample lies above it (100 for
// p99, 2 for p50). Below that the quantile is the maximum by another name.
func supports(n int, p float64) bool {
	return p < 1 && float64(n)*(1-p) >= 1-1e-9
}

// Upper is the upper end of s that s supports: its p99 from 100 samples
// on, else its maximum. label says which ("p99" or "max").
func Upper(s []time.Duration) (label string, d time.Duration) {
	if supports(len(s), 0.99) {
		return "p99", Percentile(s, 0.99)
	}
	return "max", Percentile(s, 1)
}

func nearestRank(n int, p float64) int {
	i := int(p*float64(n-1) + 0.5)
	return min(max(i, 0), n-1)
}

// FindRow returns the row of lang, probe and mode that has samples.
func FindRow(rows []Row, lang, probe, mode string) (Row, bool) {
	for _, r := range rows {
		if r.Lang == lang && r.Probe == probe && r.Mode == mode && len(r.Counted()) > 0 {
			return r, true
		}
	}
	return Row{}, false
}

// Ratio is a/b, or false when either is missing.
func Ratio(a, b time.Duration) (float64, bool) {
	if a <= 0 || b <= 0 {
		return 0, false
	}
	return float64(a) / float64(b), true
}

// MS is d in milliseconds.
func MS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
