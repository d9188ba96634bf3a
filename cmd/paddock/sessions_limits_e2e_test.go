package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// execRaw runs one cell with the request body given and decodes a 200.
func (e *e2e) execRaw(t *testing.T, id string, body map[string]any) (int, execResp, string) {
	t.Helper()
	status, raw := e.do(t, "POST", "/v1/sessions/"+id+"/execute", body, "")
	var r execResp
	if status == http.StatusOK {
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatalf("decoding %s: %v", raw, err)
		}
	}
	return status, r, string(raw)
}

// Sessions obey the server's maxima as runs do: --max-timeout bounds a
// cell that asks for no timeout and refuses one that asks for more,
// --max-output caps a cell's output, and ttl_s cannot exceed
// --max-session-lifetime.
func TestE2ESessionsObeyServerMaxima(t *testing.T) {
	e := newE2EWith(t, "--max-timeout=2s", "--max-output=1024", "--max-session-lifetime=1h", "--max-memory-mb=256")
	id := e.newSession(t, map[string]any{"language": "python"})

	status, r, raw := e.execRaw(t, id, map[string]any{"code": "while True: pass"})
	if status != http.StatusOK || r.Status != "aborted" || r.Reason != "timeout" || r.ExecutionCount != 1 {
		t.Fatalf("endless cell without a timeout: HTTP %d %s, want aborted, timeout, execution_count 1", status, raw)
	}
	// The cell ran until the agent's timer at the server's maximum
	// (2 s), not the sessions' own default (30 s). The upper bound is a
	// safety net only: far above 2 s plus the interrupt, far below 30 s.
	t.Logf("endless cell without a timeout ended %s after %v ms", r.Reason, r.Timing.ExecMS)
	if r.Timing.ExecMS < 2000 || r.Timing.ExecMS > 20000 {
		t.Errorf("endless cell ran %v ms, want about 2000 (the --max-timeout)", r.Timing.ExecMS)
	}

	status, _, raw = e.execRaw(t, id, map[string]any{"code": "1", "timeout_ms": 2001})
	want := `{"code":"invalid_request","message":"timeout_ms must be between 1 and 2000, or 0 for the default (2000); got 2001"}`
	if status != http.StatusBadRequest || strings.TrimSpace(raw) != want {
		t.Errorf("cell asking for more than --max-timeout: HTTP %d %s, want 400 %s", status, raw, want)
	}

	status, r, raw = e.execRaw(t, id, map[string]any{"code": "print('x' * 5000)"})
	if status != http.StatusOK || r.Status != "aborted" || r.Reason != "output_limit" || len(r.Stdout) > 1024 {
		t.Errorf("cell writing 5000 bytes under --max-output=1024: HTTP %d, status %q, reason %q, %d bytes of stdout; want aborted, output_limit, at most 1024 bytes",
			status, r.Status, r.Reason, len(r.Stdout))
	}

	// The session still works, and counted every cell that ran.
	status, r, raw = e.execRaw(t, id, map[string]any{"code": "40 + 2"})
	if status != http.StatusOK || r.Status != "ok" || mainText(r) != "42" || r.ExecutionCount != 3 {
		t.Errorf("cell after the refusals: HTTP %d %s, want ok, 42, execution_count 3", status, raw)
	}

	status, raw2 := e.do(t, "POST", "/v1/sessions", map[string]any{"language": "python", "ttl_s": 3601}, "")
	want = `{"code":"invalid_request","message":"ttl_s must be between 1 and 3600, or 0 for the default (900); got 3601"}`
	if status != http.StatusBadRequest || strings.TrimSpace(string(raw2)) != want {
		t.Errorf("ttl_s over --max-session-lifetime: HTTP %d %s, want 400 %s", status, raw2, want)
	}

	// A session's limits are a run's: within the --max-* flags, and its
	// sandbox's own.
	status, raw2 = e.do(t, "POST", "/v1/sessions", map[string]any{"language": "python", "limits": map[string]any{"memory_mb": 512}}, "")
	want = `{"code":"invalid_request","message":"limits.memory_mb must be between 64 and 256 (MiB); got 512"}`
	if status != http.StatusBadRequest || strings.TrimSpace(string(raw2)) != want {
		t.Errorf("session limits over --max-memory-mb: HTTP %d %s, want 400 %s", status, raw2, want)
	}
	small := e.newSession(t, map[string]any{"language": "python", "limits": map[string]any{"memory_mb": 128}})
	// 160 MiB fits the template's 512 MiB, not this session's 128.
	status, r, raw = e.execRaw(t, small, map[string]any{"code": "a = bytearray(160 << 20)"})
	if status != http.StatusOK || r.Status != "aborted" || r.Reason != "oom" {
		t.Errorf("160 MiB in a 128 MiB session: HTTP %d %s, want aborted, oom", status, raw)
	}
}
