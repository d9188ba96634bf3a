// Package pool keeps warm, never-used sandboxes per template and runs
// one-shot programs on them.
//
// A Manager owns one filler goroutine per template that keeps Size ready
// sandboxes started; Acquire hands one out (a pool hit) or starts one on the
// request path (a miss); Release destroys it off the request path. A
// sandbox is never used twice. Every start holds one of StartBudget start
// slots; requests that find no ready sandbox wait in a fair admission
// queue that comes before refills and ends at QueueDeadline with
// ErrSaturated (admit.go). Run is the one-shot path: be admitted (a run
// slot and a sandbox), run, always release. RunWith runs with other limits
// than the template's on a sandbox started for the run.
// A template may also keep a few sandboxes with their kernel already open
// for sessions (kernels.go); AcquireKernel hands one out without waiting.
//
// pool imports runner (the contract) and the standard library only. It must
// not import api, kernels, cmd, gin or any concrete runtime (runner/runsc);
// nothing here knows HTTP.
package pool
