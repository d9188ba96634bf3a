// Package stats is the shape of a latency measurement and the arithmetic
// on it: a row of timed samples (a language, a probe, a mode), the modes
// a row can have, percentiles by the nearest rank, which quantiles a
// number of samples supports, ratios, and the way the tables print
// durations.
//
// It imports only the standard library: every other package of the
// benchmarks may import it, and it knows nothing of servers, sandboxes or
// the report.
package stats
