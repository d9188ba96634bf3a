// Package langs is the bench's languages: for Python and Node, the
// probes whose time to first result is measured (a trivial one and an
// import), the session probe, and how to run a program natively and
// under raw runsc.
//
// It imports only the standard library and templates; it knows nothing
// of servers, sandboxes or the report.
package langs
