// Package agent is the in-sandbox agent: the init process of a sandbox, which
// pre-starts the language interpreter, speaks the wire protocol with the host
// over its stdin and stdout, and runs exactly one program per sandbox, or
// serves one kernel.
//
// The agent pre-starts the interpreter as the sandbox's user with a small
// embedded driver (driver.py, driver.js) that runs the template's warm-up code
// and then waits on a private pipe (fd 3) for its first request; the driver
// reports back on another (fd 4). Both pipes carry length-prefixed JSON
// frames (driverchan.go).
//
// A run delivers the files, the request and stdin, streams the output under
// per-stream caps, enforces the wall-time limit, and reports how the program
// ended: from the interpreter's wait status, never from what the program
// wrote, with the limits it read itself (limits.go). It reaps every orphan,
// and kills every user process when the program is over. Then it hands
// back the files the run's output patterns match (outputs.go), reading no
// more than the run's caps and following no symbolic link.
//
// A kernel (kernel*.go) is the same pre-started interpreter, told to become a
// Jupyter-style kernel: the driver runs the kernel code the agent sends along
// (kernel.py, kernel.js) and keeps its namespace between cells. The agent
// forwards each cell's events in order, the raw output of its child
// processes, and its end; it enforces the cell's time and output limits with
// SIGINT, then SIGKILL; it serves interrupt, restart and file requests
// (resolved inside the working directory) while cells run; and it reports
// the kernel lost when the interpreter dies. The cell's code shares the
// driver's process and can write on fd 4: a cell's count, timers and the
// reasons the agent stops it are the agent's own, and only frames that
// carry the cell's random key are the cell's (see cell in kernel_cell.go).
// It also passes questions about code (complete, inspect, is_complete:
// kernel_introspect.py and .js) to the interpreter and its answers back,
// each with a key of its own, and a cell's input requests up and the
// host's replies down (kernel_ask.go).
//
// Beside a kernel the agent also runs commands (command.go): a program the
// host names, started like the interpreter (spawn.go) as the sandbox's
// user in a process group of its own, in a directory confined to the
// working directory, with stdin at its end. Their output is forwarded
// under caps, tagged with the request's ID; their end comes from the wait
// status the agent reaps, its timer and caps, never from their output.
//
// Node's heap is capped (Config.HeapMB); an interpreter that dies of it is
// told from other aborts by what the kernel reports, its wait status and
// peak memory (oom.go), never by what it printed.
//
// The frame path's reads and writes are raw system calls on non-blocking
// descriptors (quietio.go), so that the Go runtime's monitor thread sleeps
// through a kernel cell; reports read together go to the host in one write
// (see readReports). Under gVisor each system call and thread wake is paid
// for in a cell's round trip (docs/kernel-round-trip.md).
//
// agent runs inside the sandbox and is built into a static binary: it imports
// only the standard library and runner/wire. It must not import runner, pool,
// kernels, api, any runtime, or anything that needs cgo.
package agent
