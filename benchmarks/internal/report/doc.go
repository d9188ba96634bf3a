// Package report is what one bench run found and how it is shown: the
// Report the phases fill (latency rows, throughput, idle memory, door
// overheads, steady-state points, native RSS, the servers' pool metrics,
// the session tail),
// the tables printed at the end, the JSON and CSV of every raw sample,
// the steady tables and CSV, and the headline ratios against the targets
// of docs/architecture.md, every target in one place (headline.go,
// doors.go, memtarget.go, steady.go, sessiontail.go).
//
// It imports the standard library, stats, langs and templates. It must
// not import the packages that measure (server, baseline, the phases) nor
// chart: they import it.
package report
