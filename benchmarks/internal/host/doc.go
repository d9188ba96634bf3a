// Package host reads what the bench measures from the host's kernel and
// from the files runsc and Paddock leave on it: memory and CPU cgroups
// (v1 or v2), /proc (status, stat, schedstat, smaps_rollup), which
// sandboxes belong to a server (its bundles, libcontainer's state) and
// how each was made (runsc's state file).
//
// It returns plain values (bytes, seconds, counts by name): the report's
// records are made elsewhere. It imports only the standard library and
// knows nothing of servers, HTTP or the report.
package host
