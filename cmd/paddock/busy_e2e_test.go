package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestE2ELiveCellCapsStarts: on real gVisor, while a session's cell runs
// the server lets only --busy-start-budget sandbox starts run at once
// (shown by the pool and by /metrics), a one-shot run beside it is still
// answered, and the full budget is back once the cell has ended.
func TestE2ELiveCellCapsStarts(t *testing.T) {
	// No hold and no cell maximum: what is checked must not depend on how
	// fast the machine gets from the cell's start to the checks. The
	// running cell's timeout (the largest allowed) outlasts the one-shot
	// beside it, which may wait for a start as long as the queue deadline
	// (2 minutes in these tests) on a loaded machine.
	e := newE2EWith(t, "--start-budget=3", "--busy-start-budget=1", "--busy-hold=0", "--busy-cell-max=0", "--max-timeout=5m")
	id := e.newSession(t, map[string]any{"language": "python"})
	if got := e.st.Pool.StartBudget(); got != 3 {
		t.Fatalf("start budget with no cell running = %d, want 3", got)
	}

	reason := e.interruptRunawayAfter(t, id, "print('spinning', flush=True)\nwhile True: pass", func() {
		if got := e.st.Pool.StartBudget(); got != 1 {
			t.Errorf("start budget while a cell runs = %d, want 1", got)
		}
		if m := e.metrics(t); !strings.Contains(m, "\npaddock_start_budget 1\n") {
			t.Errorf("/metrics while a cell runs has no `paddock_start_budget 1`:\n%s", grepLines(m, "paddock_start_budget"))
		}
		if code, r := e.post(t, map[string]any{"language": "python", "code": "print(6 * 7)"}); code != http.StatusOK || r.Stdout != "42\n" {
			t.Errorf("one-shot beside the running cell: HTTP %d %+v, want 200 and 42", code, r)
		}
	})
	if reason != "interrupted" {
		t.Fatalf("the cell ended with reason %q, want interrupted", reason)
	}
	// The execute's answer is written once the cell has ended, which is
	// when the cap lifts; a minute is a safety net, not a speed.
	deadline := time.Now().Add(time.Minute)
	for e.st.Pool.StartBudget() != 3 {
		if time.Now().After(deadline) {
			t.Fatalf("start budget still %d a minute after the cell ended, want 3", e.st.Pool.StartBudget())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if m := e.metrics(t); !strings.Contains(m, "\npaddock_start_budget 3\n") {
		t.Errorf("/metrics after the cell has no `paddock_start_budget 3`:\n%s", grepLines(m, "paddock_start_budget"))
	}
}

// metrics scrapes /metrics (open in the tests' anonymous loopback mode).
func (e *e2e) metrics(t *testing.T) string {
	t.Helper()
	resp, err := http.Get(e.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: HTTP %d %v", resp.StatusCode, err)
	}
	return string(b)
}

// grepLines is the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
