// Package chart draws the run's PNG charts: the p50 time to first result
// of every latency row as bars on a log scale, and the steady state's
// runs/s and p50/p99 against clients, one row of two panels per template.
//
// It reads the report's records and imports stats, report and
// golang.org/x/image. It must not import the packages that measure
// (server, baseline, the phases): what it draws comes from the report.
package chart
