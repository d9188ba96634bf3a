// Package runner is the sandbox contract: what the pool, the kernels and the
// API may ask of a sandbox, independent of how it is isolated.
//
// runner declares Runtime and Sandbox plus the value types and sentinels that
// cross the boundary. Concrete runtimes live in subpackages (runner/runsc for
// gVisor) and are chosen only by cmd and benchmarks. runner must not import
// pool, kernels, api or any concrete runtime, and must stay free of runsc
// specifics so a second runtime (runc's libcontainer) fits the same shape.
package runner
