// Package runnertest is a hand-written fake of the runner contract for the
// tests of pool, kernels and api.
//
// Runtime and Sandbox honour the contract (a second Run fails with
// runner.ErrUsed, Done is closed by Destroy, Destroy is idempotent) and
// expose hook fields (StartFunc, RunFunc, KernelFunc) so a test can inject
// slow starts, failures, blocking runs or panics. Counters (Starts,
// Started, Destroyed, Live) let a test check that nothing leaked.
//
// Sandbox is also a runner.KernelOpener: OpenKernel returns a Kernel, a
// tiny scripted interpreter with an in-memory working directory, hook
// fields (ExecuteFunc, InterruptFunc, RestartFunc, file hooks, CommandFunc
// for runner.Commander), counters
// (Executes, Interrupts, Restarts, Overlaps) and Lose to simulate a dying
// interpreter. Destroying or killing the sandbox loses its kernel.
//
// runnertest imports only runner and the standard library; it must not
// import pool, kernels, api or a concrete runtime, and it must never be
// imported by non-test code.
package runnertest
