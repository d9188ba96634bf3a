// Package load is the closed loop behind every rate of the bench: a
// number of clients, each starting its next run when its last one ends,
// for a while, counting the runs answered, their latencies, the answers
// that asked to come back later (BusyError: 429, 503) and the clients
// refused to the end.
//
// It knows only what a run returns (a start kind, a duration, an error):
// it imports the standard library, bench and report, and must not import
// server, baseline or the phases.
package load
