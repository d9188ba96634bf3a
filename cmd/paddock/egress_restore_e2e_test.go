package main

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// TestE2EEgressRestored: a networked run of python, a snapshotted
// template, has the pool build its networked image; once it is ready,
// networked runs are restored from it ("start": "restore") and still
// reach the allowed host through their own proxy, while runs without a
// network keep loopback only.
func TestE2EEgressRestored(t *testing.T) {
	e := newE2EWith(t, "--egress-allow=upstream.test:8080", "--egress-hosts=upstream.test="+upstreamAddr)
	startInternet(t)

	type answer struct {
		networkAnswer
		Start string `json:"start"`
	}
	run := func(t *testing.T, network any) answer {
		t.Helper()
		body := map[string]any{"language": "python", "code": fetchAll("http://upstream.test:8080/"), "timeout_ms": 20000}
		if network != nil {
			body["network"] = network
		}
		status, raw := e.do(t, "POST", "/v1/run", body, "")
		var a answer
		if status != http.StatusOK {
			t.Fatalf("HTTP %d %s", status, raw)
		}
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatalf("decoding %s: %v", raw, err)
		}
		return a
	}
	allow := map[string]any{"allow": []string{"upstream.test:8080"}}
	const reached = "['eth0', 'lo']\nhello from upstream.test:8080\n"

	if a := run(t, allow); a.Stdout != reached || a.Start != "cold" {
		t.Fatalf("first networked run: start %s, stdout %q (stderr %q); want cold and the upstream reached", a.Start, a.Stdout, a.Stderr)
	}
	deadline := time.Now().Add(2 * time.Minute) // a safety net, not a speed the machine must reach
	for networkSnapshot(e, "python") != "ready" {
		if time.Now().After(deadline) {
			t.Fatalf("python's networked image %q after 2 minutes, want ready", networkSnapshot(e, "python"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	for i := range 2 {
		if a := run(t, allow); a.Stdout != reached || a.Start != "restore" {
			t.Errorf("networked run %d with the image ready: start %s, stdout %q (stderr %q); want restore and the upstream reached", i, a.Start, a.Stdout, a.Stderr)
		}
	}
	if a := run(t, nil); a.Stdout != "['lo']\nfailed URLError\n" {
		t.Errorf("run without a network: stdout %q (stderr %q), want loopback only", a.Stdout, a.Stderr)
	}
}

func networkSnapshot(e *e2e, template string) string {
	for _, s := range e.st.Pool.Stats() {
		if s.Template == template {
			return s.NetworkSnapshot
		}
	}
	return ""
}
