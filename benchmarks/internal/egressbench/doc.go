// Package egressbench is the egress phase (issue 31): a download from a
// stand-in internet, an HTTP server the bench serves in a network
// namespace of its own reached over a veth, timed by one Python client
// from the host's namespace and from inside a networked sandbox, through
// its egress proxy (a CONNECT tunnel and a plain-HTTP forward) and
// straight to a listener the bench opens in the runtime's egress
// namespace (no proxy): so that the proxy's share and gVisor's netstack's
// are told apart. And the start of a networked one-shot against the same
// run started for it without a network, and against a pooled one. No
// packet leaves the host: every address is in a namespace the bench or
// the server made.
//
// It imports bench, report, server and stats, and runner for the
// sandbox's addresses; it must not import the other phases.
package egressbench
