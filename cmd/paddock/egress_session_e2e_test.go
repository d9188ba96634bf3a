package main

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestE2EEgressSession: a session that asks for a network keeps it for
// its whole life: its cells reach what the server allows and it asked
// for, and nothing else, before and after it hibernates (the woken
// sandbox gets a fresh network and its own proxy), and after its kernel
// is replaced; its answer lists the policy. A session without one has
// loopback only.
func TestE2EEgressSession(t *testing.T) {
	if _, err := exec.LookPath("ip"); err != nil {
		t.Fatal("ip (iproute2) is needed to build the test's network namespaces: make test installs it")
	}
	e := newE2EWith(t, "--egress-allow=upstream.test:8080 other.test:8080",
		"--egress-hosts=upstream.test="+upstreamAddr+",other.test="+upstreamAddr+",local.test=127.0.0.1")
	startInternet(t)

	type session struct {
		ID      string `json:"id"`
		State   string `json:"state"`
		Start   string `json:"start"`
		Network *struct {
			Mode  string   `json:"mode"`
			Allow []string `json:"allow"`
		} `json:"network"`
	}
	create := func(t *testing.T, network any) session {
		t.Helper()
		body := map[string]any{"language": "python"}
		if network != nil {
			body["network"] = network
		}
		status, raw := e.do(t, "POST", "/v1/sessions", body, "")
		var s session
		if status != http.StatusCreated || json.Unmarshal(raw, &s) != nil {
			t.Fatalf("creating a session: HTTP %d %s", status, raw)
		}
		t.Cleanup(func() { e.do(t, "DELETE", "/v1/sessions/"+s.ID, nil, "") })
		return s
	}
	cell := func(t *testing.T, id, code string) string {
		t.Helper()
		status, raw := e.do(t, "POST", "/v1/sessions/"+id+"/execute", map[string]any{"code": code, "timeout_ms": 20000}, "")
		var r struct {
			Stdout string `json:"stdout"`
			Stderr string `json:"stderr"`
		}
		if status != http.StatusOK || json.Unmarshal(raw, &r) != nil {
			t.Fatalf("executing in %s: HTTP %d %s", id, status, raw)
		}
		return r.Stdout + r.Stderr
	}
	fetch := fetchAll("http://upstream.test:8080/", "http://local.test:8080/", "http://other.test:8080/")
	want := strings.Join([]string{"['eth0', 'lo']", "hello from upstream.test:8080", "refused 403 not_allowed", "refused 403 not_allowed"}, "\n") + "\n"

	s := create(t, map[string]any{"allow": []string{"upstream.test:8080", "local.test:8080"}})
	if s.Network == nil || s.Network.Mode != "allowlist" || !slices.Equal(s.Network.Allow, []string{"upstream.test:8080"}) {
		t.Fatalf("the session's network %+v, want an allowlist of upstream.test:8080 alone (local.test is not the server's to give)", s.Network)
	}
	if got := cell(t, s.ID, fetch); got != want {
		t.Errorf("a networked session's first cell printed %q, want %q", got, want)
	}

	t.Run("after hibernating", func(t *testing.T) {
		var p session
		status, raw := e.do(t, "POST", "/v1/sessions/"+s.ID+"/pause", nil, "")
		if status != http.StatusOK || json.Unmarshal(raw, &p) != nil || p.State != "hibernated" {
			t.Fatalf("pause: HTTP %d %s", status, raw)
		}
		if got := cell(t, s.ID, fetch); got != want {
			t.Errorf("the woken session printed %q, want %q", got, want)
		}
	})

	t.Run("after a restart", func(t *testing.T) {
		if status, raw := e.do(t, "POST", "/v1/sessions/"+s.ID+"/restart", nil, ""); status != http.StatusOK {
			t.Fatalf("restart: HTTP %d %s", status, raw)
		}
		if got := cell(t, s.ID, fetch); got != want {
			t.Errorf("the restarted session printed %q, want %q", got, want)
		}
	})

	t.Run("none asked", func(t *testing.T) {
		plain := create(t, nil)
		if plain.Network != nil {
			t.Errorf("a session that asked for no network lists %+v", plain.Network)
		}
		if got := cell(t, plain.ID, fetchAll("http://upstream.test:8080/")); got != "['lo']\nfailed URLError\n" {
			t.Errorf("a session without a network printed %q, want loopback only and a failed fetch", got)
		}
	})

	t.Run("nothing allowed", func(t *testing.T) {
		status, raw := e.do(t, "POST", "/v1/sessions", map[string]any{"language": "python",
			"network": map[string]any{"allow": []string{"evil.test"}}}, "")
		if status != http.StatusForbidden || !strings.Contains(string(raw), `"network_not_allowed"`) {
			t.Errorf("a session asking only for a host the server does not allow: HTTP %d %s, want 403 network_not_allowed", status, raw)
		}
	})
}
