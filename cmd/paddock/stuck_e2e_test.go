package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// stuckWhy is how an answer words a kernel killed because its cell did
// not stop when interrupted at its timeout.
const stuckWhy = "the cell did not stop when interrupted at its timeout, so its kernel was killed"

// A cell that cannot be interrupted does not end its session, over /v1
// against real gVisor: at its timeout the kernel is killed, the answer
// says the state is gone, and the same session id goes on with a fresh
// kernel of its template, as a Jupyter front end restarts its kernel:
// the next cell works, counts from 1 again, and finds neither the old
// variables nor the old files.
func TestE2EStuckCellRestartsKernel(t *testing.T) {
	e := newE2E(t)
	tests := []struct {
		name, language string
		// setup runs first, set leaves a variable and a file, block
		// (when given) runs last; each ends well.
		setup, set, block, stuck string
		// gone reads the variable set left: an error of errName now.
		gone, errName string
	}{
		{
			name: "python regular expression stuck in native code", language: "python",
			set:   "kept = 41\nopen('/workspace/kept.txt', 'w').write('kept')",
			stuck: "import re\nre.match(r'(a+)+$', 'a' * 40 + 'b')",
			gone:  "kept", errName: "NameError",
		},
		{
			name: "python loop ignoring SIGINT", language: "python",
			setup: "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)",
			set:   "kept = 41\nopen('/workspace/kept.txt', 'w').write('kept')",
			stuck: "while True: pass",
			gone:  "kept", errName: "NameError",
		},
		{
			// The callback runs once the cell is over and holds node's
			// only thread: the next cell is never read and no interrupt
			// reaches a script.
			name: "node loop that never yields", language: "node",
			set:   "let kept = 41\nrequire('fs').writeFileSync('/workspace/kept.txt', 'kept')",
			block: "setImmediate(() => { for (;;) {} })",
			stuck: "'never read'",
			gone:  "kept", errName: "ReferenceError",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := e.newSession(t, map[string]any{"language": tt.language})
			for _, code := range []string{tt.setup, tt.set, tt.block} {
				if code == "" {
					continue
				}
				if r := e.exec(t, id, code); r.Status != "ok" {
					t.Fatalf("%q: %+v", code, r)
				}
			}

			r := e.execFor(t, id, tt.stuck, 1000)
			t.Logf("stuck cell: %+v", r)
			if r.Status != "aborted" || r.Reason != "timeout" || !r.StateLost || !r.KernelRestarted || r.StateLostReason != stuckWhy {
				t.Fatalf("stuck cell: status %q reason %q state_lost %v kernel_restarted %v %q; want aborted timeout, state lost, restarted, %q",
					r.Status, r.Reason, r.StateLost, r.KernelRestarted, r.StateLostReason, stuckWhy)
			}

			// The same id goes on: a result at count 1, the state gone.
			if r := e.exec(t, id, "1 + 1"); mainText(r) != "2" || r.ExecutionCount != 1 || r.StateLost {
				t.Errorf("1 + 1 after the restart: %+v, want 2 at count 1", r)
			}
			if r := e.exec(t, id, tt.gone); r.Error == nil || r.Error.Name != tt.errName {
				t.Errorf("%s after the restart: %+v, want %s", tt.gone, r, tt.errName)
			}
			if code, raw := e.do(t, "GET", "/v1/sessions/"+id+"/files?path=kept.txt", nil, ""); code != http.StatusNotFound {
				t.Errorf("the old kernel's file after the restart: HTTP %d %s, want 404", code, raw)
			}
			code, raw := e.do(t, "GET", "/v1/sessions/"+id, nil, "")
			var s struct {
				ID, State string
				Restarts  int
			}
			if err := json.Unmarshal(raw, &s); code != http.StatusOK || err != nil || s.ID != id || s.State != "idle" || s.Restarts != 1 {
				t.Errorf("session after the restart: HTTP %d %s; want the same id, idle, 1 restart", code, raw)
			}
			if strings.Contains(string(raw), "lost_reason") {
				t.Errorf("a live session has a lost_reason: %s", raw)
			}
		})
	}
}
