// Package pool keeps warm, never-used sandboxes per template and runs
// one-shot programs on them.
//
// A Manager owns one filler goroutine per template that keeps Size ready
// sandboxes started; Acquire hands one out (a pool hit) or starts one on the
// request path (a cold miss, bounded by MaxColdStarts); Release destroys it
// off the request path. A sandbox is never used twice. Run is the one-shot
// path: wait for a run slot, acquire, run, always release. RunWith runs
// with other limits than the template's on a sandbox started for the run.
// A template may also keep a few sandboxes with their kernel already open
// for sessions (kernels.go); AcquireKernel hands one out without waiting.
//
// pool imports runner (the contract) and the standard library only. It must
// not import api, kernels, cmd, gin or any concrete runtime (runner/runsc);
// nothing here knows HTTP.
package pool
