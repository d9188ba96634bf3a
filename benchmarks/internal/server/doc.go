// Package server runs `paddock serve` for the bench: a child process on
// a free loopback port with the flags a Config asks for (pools, snapshots,
// runtime, or the flags `make run` gives it), its state in a directory of
// its own, and the calls the measurements make on it: POST /v1/run and
// /v1/sessions, the template listing, the pool metrics, and the waits
// until its pools are full, quiet or refilled by restores.
//
// It times nothing itself and imports bench, host, langs, load, report
// and stats; it must not import baseline, chart or the phases.
package server
