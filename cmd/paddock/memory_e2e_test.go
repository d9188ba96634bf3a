package main

import (
	"net/http"
	"strings"
	"testing"
)

// The memory a run can fill without a limit noticing, over the API
// against real gVisor: /dev/shm counts against disk_mb like /tmp, and
// Node's heap is sized to memory_mb, so that filling it reads oom, for a
// one-shot and for a session's cell, while an abort with a small heap,
// whatever it prints, reads killed.
func TestE2EMemoryAndShm(t *testing.T) {
	e := newE2E(t)
	const (
		growHeap = "const a = []; for (;;) a.push(new Array(1e5).fill(1.5))"
		forged   = "process.stderr.write('FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\\n'); process.abort()"
		shm60    = "import errno, os\nwith open('/dev/shm/small', 'wb') as f:\n    f.write(b'x' * (1 << 20))\nprint('1 MiB written')\n" +
			"try:\n    with open('/dev/shm/big', 'wb') as f:\n        for _ in range(60):\n            f.write(b'x' * (1 << 20))\n    print('60 MiB written')\n" +
			"except OSError as e:\n    print('refused', e.errno == errno.ENOSPC)\n"
	)
	tests := []struct {
		name      string
		body      map[string]any
		reason    string
		exitCode  int
		stdout    string
		stderrHas string
	}{
		{name: "disk 16 MiB, 60 MiB to /dev/shm",
			body:   map[string]any{"language": "python", "code": shm60, "limits": map[string]any{"disk_mb": 16}},
			reason: "ok", stdout: "1 MiB written\nrefused True\n"},
		{name: "template disk (256 MiB), 60 MiB to /dev/shm",
			body:   map[string]any{"language": "python", "code": shm60},
			reason: "ok", stdout: "1 MiB written\n60 MiB written\n"},
		{name: "memory 256 MiB, node heap filled",
			body:   map[string]any{"language": "node", "code": growHeap, "timeout_ms": 30000, "limits": map[string]any{"memory_mb": 256}},
			reason: "oom", exitCode: 134, stderrHas: "JavaScript heap out of memory"},
		{name: "node aborts, printing node's heap message",
			body:   map[string]any{"language": "node", "code": forged},
			reason: "killed", exitCode: 134, stderrHas: "JavaScript heap out of memory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, r := e.postFull(t, tt.body)
			t.Logf("HTTP %d reason %s exit %d stdout %.200q stderr %.200q", code, r.Reason, r.ExitCode, r.Stdout, r.Stderr)
			if code != http.StatusOK || r.Reason != tt.reason || r.ExitCode != tt.exitCode {
				t.Errorf("HTTP %d reason %q exit %d, want 200 %q %d", code, r.Reason, r.ExitCode, tt.reason, tt.exitCode)
			}
			if tt.stdout != "" && r.Stdout != tt.stdout {
				t.Errorf("stdout %q, want %q", r.Stdout, tt.stdout)
			}
			if !strings.Contains(r.Stderr, tt.stderrHas) {
				t.Errorf("stderr %.300q lacks %q", r.Stderr, tt.stderrHas)
			}
		})
	}

	t.Run("node session cell fills the heap", func(t *testing.T) {
		id := e.newSession(t, map[string]any{"language": "node"})
		if r := e.exec(t, id, "let kept = 41"); r.Reason != "ok" {
			t.Fatalf("first cell: %+v", r)
		}
		// The template's 512 MiB gives a 313 MiB heap: 3 to 6 s to fill.
		if r := e.exec(t, id, growHeap); r.Status != "aborted" || r.Reason != "oom" || !r.StateLost || !r.KernelRestarted {
			t.Errorf("heap-filling cell: status %q reason %q state lost %v restarted %v stderr %.300q, want aborted oom on a restarted kernel",
				r.Status, r.Reason, r.StateLost, r.KernelRestarted, r.Stderr)
		}
		if r := e.exec(t, id, "typeof kept"); mainText(r) != "'undefined'" || r.ExecutionCount != 1 {
			t.Errorf("after the heap ran out: %+v, want kept undefined at count 1 on the fresh kernel", r)
		}
	})
}
