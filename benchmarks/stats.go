package main

import (
	"slices"
	"time"
)

// Modes of a latency row: how the program got an interpreter.
const (
	modeNative     = "native rootfs"     // the template's interpreter, unsandboxed: the baseline
	modeHost       = "native host"       // the host's interpreter at the same path
	modeRaw        = "raw runsc run"     // `runsc run` + delete of the bare interpreter, Paddock's limits, no Paddock
	modeRawRestore = "raw runsc restore" // `runsc restore` + delete of a warmed-up interpreter, Paddock's limits, no Paddock
	modeCold       = "cold"              // Paddock, no pool, no snapshot: started on the request path
	modeRestore    = "restore"           // Paddock, no pool: restored from the snapshot on the request path
	modePool       = "warm pool idle"    // Paddock, taken from a full, idle pool
	modeBusy       = "warm pool busy"    // Paddock, runs back to back at a steady rate, pool at its floor
	modeSession    = "session"           // execute in an open session, HTTP round trip
	// The same on the runc runtime (plain containers, the host's kernel),
	// for the "gVisor ÷ runc" headlines.
	modeRuncCold    = "runc cold"           // runc, no pool: started on the request path
	modeRuncPool    = "runc warm pool idle" // runc, taken from a full, idle pool
	modeRuncSession = "runc session"        // execute in an open session on runc
)

// sample is one timed attempt. Server fields are empty for native and raw
// runsc samples.
type sample struct {
	D time.Duration
	// Start is the server's start kind: pool, restore or cold.
	Start string
	// Counted is false for an attempt whose start kind was not the row's:
	// it is kept in the raw output but not in the percentiles.
	Counted bool
	Timing  *serverTiming
	// Delete is the part of D a raw runsc sample spent in `runsc delete`.
	Delete time.Duration
}

// serverTiming is the phase breakdown a run response carries.
type serverTiming struct {
	QueueMS   float64 `json:"queue_ms"`
	AcquireMS float64 `json:"acquire_ms"`
	StartMS   float64 `json:"start_ms"`
	ExecMS    float64 `json:"exec_ms"`
	TotalMS   float64 `json:"total_ms"`
}

// row is one latency measurement: a language, a probe and a mode.
type row struct {
	Lang, Probe, Mode string
	Samples           []sample
	// Mismatches counts attempts whose start kind was not the row's mode.
	Mismatches int
	// Note explains a row without samples ("n/a: not snapshotted").
	Note string
}

// counted returns the durations that count towards the percentiles.
func (r row) counted() []time.Duration {
	var out []time.Duration
	for _, s := range r.Samples {
		if s.Counted {
			out = append(out, s.D)
		}
	}
	return out
}

func (r row) p50() time.Duration { return percentile(r.counted(), 0.5) }

// serverStartP50 is the p50 of the server's own start phase (restore or
// cold start on the request path; zero for a pool hit), or -1 without
// server timings.
func (r row) serverStartP50() float64 {
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

// percentile returns the p-quantile (0 ≤ p ≤ 1) of s by the nearest rank
// on the sorted samples; 0 for no samples. s is not modified.
func percentile(s []time.Duration, p float64) time.Duration {
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

// upper is the upper end of s that s supports: its p99 from 100 samples
// on, else its maximum. label says which ("p99" or "max").
func upper(s []time.Duration) (label string, d time.Duration) {
	if supports(len(s), 0.99) {
		return "p99", percentile(s, 0.99)
	}
	return "max", percentile(s, 1)
}

func nearestRank(n int, p float64) int {
	i := int(p*float64(n-1) + 0.5)
	return min(max(i, 0), n-1)
}

// findRow returns the row of lang, probe and mode that has samples.
func findRow(rows []row, lang, probe, mode string) (row, bool) {
	for _, r := range rows {
		if r.Lang == lang && r.Probe == probe && r.Mode == mode && len(r.counted()) > 0 {
			return r, true
		}
	}
	return row{}, false
}

// ratio is a/b, or false when either is missing.
func ratio(a, b time.Duration) (float64, bool) {
	if a <= 0 || b <= 0 {
		return 0, false
	}
	return float64(a) / float64(b), true
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
