package mcpdoor

import (
	"math"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/runner"
)

// wraps is a count of milliseconds or seconds whose nanoseconds wrap an
// int64 round to a small positive duration (under a second) when
// multiplied without care: a timeout or TTL far past every limit would
// reach the core as one it accepts.
const wraps = 18446744073710

// A timeout or TTL past a Duration's range reaches the core as the
// largest Duration, which its range check refuses, not as a wrapped one.
func TestDurationsSaturate(t *testing.T) {
	var runTimeout, cellTimeout time.Duration
	f := &fakeCore{
		run: func(_ core.Caller, in core.RunInput) (core.RunResult, error) {
			runTimeout = in.Timeout
			return core.RunResult{}, &core.Error{Kind: core.KindInvalid, Code: "invalid_request", Message: "timeout_ms too large"}
		},
		execute: func(_ string, in core.ExecuteInput, _ func(runner.Event)) (kernels.Execution, error) {
			cellTimeout = in.Timeout
			return kernels.Execution{}, &core.Error{Kind: core.KindInvalid, Code: "invalid_request", Message: "timeout_ms too large"}
		},
	}
	cs := connect(t, serve(t, f, Options{}), "")
	call(t, cs, "run_code", map[string]any{"language": "python", "code": "1", "timeout_ms": wraps})
	call(t, cs, "execute", map[string]any{"session_id": "s0", "code": "1", "timeout_ms": wraps})
	call(t, cs, "create_session", map[string]any{"language": "python", "ttl_s": int64(wraps) * 1000})
	if runTimeout != math.MaxInt64 || cellTimeout != math.MaxInt64 {
		t.Errorf("timeouts the core got: run %v, cell %v; want %v", runTimeout, cellTimeout, time.Duration(math.MaxInt64))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.ttls) != 1 || f.ttls[0] != math.MaxInt64 {
		t.Errorf("TTLs the core got: %v; want [%v]", f.ttls, time.Duration(math.MaxInt64))
	}
}
