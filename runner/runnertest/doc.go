// Package runnertest is a hand-written fake of the runner contract for the
// tests of pool, kernels and api.
//
// Runtime and Sandbox honour the contract (a second Run fails with
// runner.ErrUsed, Done is closed by Destroy, Destroy is idempotent) and
// expose hook fields (StartFunc, RunFunc) so a test can inject slow starts,
// failures, blocking runs or panics. Counters (Starts, Started, Destroyed,
// Live) let a test check that nothing leaked.
//
// runnertest imports only runner and the standard library; it must not
// import pool, kernels, api or a concrete runtime, and it must never be
// imported by non-test code.
package runnertest
