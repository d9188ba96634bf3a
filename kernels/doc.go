// Package kernels keeps stateful Jupyter-style Python and Node sessions
// alive inside sandboxes taken from the pool (see docs/architecture.md).
//
// A Manager owns a bounded table of sessions. Each session holds one
// sandbox leased from pool.Manager.Acquire and turned into a kernel
// (runner.KernelOpener), or one the pool turned into a kernel before it
// was asked for (pool.Manager.AcquireKernel); it belongs to one owner (a tenant) and is
// invisible to every other owner. Executions in a session run one at a
// time, optionally queued; commands (a shell command, say) run beside
// them, a few at once (command.go). An idle TTL and a maximum lifetime
// bound each session, and a reaper closes expired ones and releases their
// sandboxes.
// A kernel that dies (out of memory, crashed, or killed because a cell did
// not stop when interrupted at its timeout) is replaced by a fresh one of
// the same template on a fresh sandbox, as a Jupyter front end restarts
// its kernel, and the cell's answer says the state is gone (replace.go);
// the state is never replaced silently. Only a session that cannot get a
// fresh kernel is "lost".
//
// Options are checked against the Config's ranges with policy, the checks
// runs share.
//
// kernels imports pool, policy, runner and the standard library. It must not
// import core, api, a door, cmd, gin, or a concrete runtime (runner/runsc);
// nothing here knows HTTP. The core (package core) calls it for every door.
package kernels
