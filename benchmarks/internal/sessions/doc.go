// Package sessions measures Jupyter-style sessions on a Paddock server:
// the round trip of an execute in an open session (`x + 1`), a new
// session's create → first result with and without kernel-ready
// sandboxes in the pool, and the session tail: the same execute back to
// back on an idle server, then while each count of clients streams
// one-shots, with the kernel sandbox's CFS throttling and run-queue wait
// beside it, and the one-shots' rate with a second session running a
// CPU loop and without.
//
// It imports bench, host, langs, load, report, server and stats; it must
// not import baseline, chart or the other phases.
package sessions
