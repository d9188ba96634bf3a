// Package agent is the in-sandbox agent: the init process of a sandbox, which
// pre-starts the language interpreter, speaks the wire protocol with the host
// over its stdin and stdout, and runs exactly one program per sandbox.
//
// The agent pre-starts the interpreter as the sandbox's user with a small
// embedded driver (driver.py, driver.js) that runs the template's warm-up code
// and then waits on a private pipe (fd 3) for the request. A run delivers the
// files, the request and stdin, streams the output under per-stream caps,
// enforces the wall-time limit, and reports how the program ended. It reaps
// every orphan, and kills every user process when the program is over.
//
// agent runs inside the sandbox and is built into a static binary: it imports
// only the standard library and runner/wire. It must not import runner, pool,
// kernels, api, any runtime, or anything that needs cgo.
package agent
