package agent

import (
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner/wire"
)

// The cells of a kernel share one deadline timer (armDeadlineLocked): a
// cell's own limit holds whatever the cells before it asked for.

// TestKernelShortLimitAfterLongOne: a cell with a short limit, after a
// cell with a ten-minute one, times out at its own limit. Its loop ends by
// itself after 90 s, so a limit not enforced shows as an ok cell.
func TestKernelShortLimitAfterLongOne(t *testing.T) {
	t.Parallel()
	k := startKernel(t, testConfig(t, LanguagePython), nil)
	if got := k.execute(wire.Execute{Code: "1 + 1", TimeoutMS: 600_000}).resultText(); got != "2" {
		t.Fatalf("first cell: %q, want 2", got)
	}
	res := k.execute(wire.Execute{Code: "import time\nend = time.monotonic() + 90\nwhile time.monotonic() < end: pass", TimeoutMS: 500})
	res.mustDone(t, "aborted", "timeout")
}

// TestKernelLongLimitAfterShortOne: a cell with a long limit runs past the
// short limit of the cell before it, whose firing of the shared timer only
// waits again for the running cell's own.
func TestKernelLongLimitAfterShortOne(t *testing.T) {
	t.Parallel()
	k := startKernel(t, testConfig(t, LanguagePython), nil)
	first := time.Now()
	if got := k.execute(wire.Execute{Code: "1 + 1", TimeoutMS: 1000}).resultText(); got != "2" {
		t.Fatalf("first cell: %q, want 2", got)
	}
	if late := time.Since(first); late >= time.Second {
		t.Logf("the second cell starts %v after the first: the first one's limit passed before it, which proves less", late)
	}
	res := k.execute(wire.Execute{Code: "import time\ntime.sleep(3)\nprint('slept')", TimeoutMS: 60_000})
	res.mustDone(t, "ok", "ok")
	if got := res.text("stdout"); got != "slept\n" {
		t.Errorf("stdout %q, want %q", got, "slept\n")
	}
}
