// Package agentconn is the host end of the agent protocol (runner/wire),
// shared by every runtime.
//
// A runtime starts a sandbox whose init is paddock-agent, keeps the host
// ends of the agent's stdin, stdout and stderr, and hands them to New with
// its Hooks (how to destroy the sandbox, how to read its OOM kills). The
// Conn it gets back is the runner.Sandbox and runner.KernelOpener it
// returns: Conn speaks hello and ping, delivers a run and collects its
// output and output files up to the caps (which it enforces itself), dispatches a kernel's frames (its cells and the commands that run
// beside them, runner.Commander), and turns the
// agent's verdicts and the memory cgroup's counter into runner reasons.
//
// agentconn imports runner and runner/wire only; it knows nothing of how a
// sandbox is isolated.
package agentconn
