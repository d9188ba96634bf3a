package main

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// restartClient calls one server process's REST API.
type restartClient struct{ url string }

func (c restartClient) call(t *testing.T, method, path string, body any) (int, []byte) {
	t.Helper()
	var b []byte
	if body != nil {
		b, _ = json.Marshal(body)
	}
	return sendTo(t, method, c.url+path, b)
}

// must is call for an answer that must be status; it decodes it into out.
func (c restartClient) must(t *testing.T, status int, method, path string, body, out any) {
	t.Helper()
	code, raw := c.call(t, method, path, body)
	if code != status {
		t.Fatalf("%s %s: HTTP %d %s, want %d", method, path, code, raw, status)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, raw)
		}
	}
}

func (c restartClient) exec(t *testing.T, id, code string) execResp {
	t.Helper()
	var r execResp
	c.must(t, http.StatusOK, "POST", "/v1/sessions/"+id+"/execute", map[string]any{"code": code, "timeout_ms": 30000}, &r)
	return r
}

// TestE2ESessionsSurviveARestart: SIGTERM hibernates the open sessions
// and the next server on the same state dir takes them over, with their
// ids, variables, files, execution counts and checkpoints; after a
// SIGKILL, a session that was hibernated goes on and one that ran comes
// back session_lost, saying why, never as an empty kernel. Once with the
// catalog in the history database, once in files (--history-db=off).
func TestE2ESessionsSurviveARestart(t *testing.T) {
	runscPath, _, _ := lifecycleEnv(t)
	bin := serverBinary(t)
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"history-db", nil},
		{"files", []string{"--history-db=off"}},
	} {
		t.Run(tc.name, func(t *testing.T) { sessionsSurviveARestart(t, bin, runscPath, tc.flags) })
	}
}

func sessionsSurviveARestart(t *testing.T, bin, runscPath string, flags []string) {
	state := newStateDir(t, runscPath)
	first := startServer(t, bin, state, flags...)
	c := restartClient{first.url}

	type open struct{ id, lang string }
	var sessions []open
	for _, lang := range []string{"python", "node", "python"} {
		var s sessionInfo
		c.must(t, http.StatusCreated, "POST", "/v1/sessions", map[string]any{"language": lang}, &s)
		sessions = append(sessions, open{s.ID, lang})
	}
	set := map[string]string{
		"python": "x = 41\nopen('kept.txt', 'w').write('kept')",
		"node":   "var x = 41; require('fs').writeFileSync('kept.txt', 'kept')",
	}
	check := map[string]string{
		"python": "print(x + 1, open('kept.txt').read())",
		"node":   "console.log(x + 1, require('fs').readFileSync('kept.txt', 'utf8'))",
	}
	for _, s := range sessions {
		c.exec(t, s.id, set[s.lang])
	}
	// The third keeps a checkpoint at x = 41, then moves on.
	third := sessions[2].id
	c.must(t, http.StatusCreated, "POST", "/v1/sessions/"+third+"/checkpoints", map[string]any{"name": "at41"}, nil)
	c.exec(t, third, "x = 99")

	// And an E2B sandbox, made with the real SDK.
	var e2b struct {
		ID    string `json:"id"`
		Count int    `json:"count"`
	}
	sdkEnv := func(url string) []string {
		return []string{"E2B_API_URL=" + url, "E2B_SANDBOX_URL=" + url, "E2B_API_KEY=unused"}
	}
	if out := runE2BSurvive(t, sdkEnv(first.url), "before"); json.Unmarshal(out, &e2b) != nil || e2b.Count != 1 {
		t.Fatalf("the E2B sandbox before the restart: %s", out)
	}

	stop(t, first, syscall.SIGTERM)
	if logs := first.logs.String(); !strings.Contains(logs, `msg="saved the open sessions for the next server" hibernated=4 lost=0`) {
		t.Errorf("the first server's log does not say it saved four sessions (three and the E2B sandbox):\n%s", logs)
	}
	if ids := runscIDs(t, runscPath, state); len(ids) > 0 {
		t.Errorf("sandboxes left after the first server stopped: %v", ids)
	}

	second := startServer(t, bin, state, flags...)
	c = restartClient{second.url}
	var listed struct {
		Sessions []hibernatedSession `json:"sessions"`
	}
	c.must(t, http.StatusOK, "GET", "/v1/sessions", nil, &listed)
	var ids []string
	for _, s := range listed.Sessions {
		ids = append(ids, s.ID)
		if s.State != "hibernated" {
			t.Errorf("session %s after the restart: state %q, want hibernated", s.ID, s.State)
		}
	}
	for _, s := range append(sessions, open{e2b.ID, "python"}) {
		if !slices.Contains(ids, s.id) {
			t.Fatalf("session %s is not listed after the restart: %v", s.id, ids)
		}
	}
	for _, s := range sessions[:2] {
		r := c.exec(t, s.id, check[s.lang])
		if strings.TrimSpace(r.Stdout) != "42 kept" || r.ExecutionCount != 2 {
			t.Errorf("%s session %s after the restart: stdout %q, count %d; want \"42 kept\", 2", s.lang, s.id, r.Stdout, r.ExecutionCount)
		}
	}
	want := `{"listed":true,"text":"42","count":2,"file":"kept","command":"alive","killed":true}`
	if out := runE2BSurvive(t, sdkEnv(second.url), "after", e2b.ID); string(out) != want {
		t.Errorf("the E2B sandbox after the restart: %s, want %s", out, want)
	}
	c.must(t, http.StatusOK, "POST", "/v1/sessions/"+third+"/rewind", map[string]any{"checkpoint": "at41"}, nil)
	if r := c.exec(t, third, check["python"]); strings.TrimSpace(r.Stdout) != "42 kept" || r.ExecutionCount != 2 {
		t.Errorf("the third session rewound after the restart: stdout %q, count %d; want \"42 kept\", 2", r.Stdout, r.ExecutionCount)
	}

	// A crash: the first session is hibernated, the others run.
	paused := sessions[0].id
	var p hibernatedSession
	c.must(t, http.StatusOK, "POST", "/v1/sessions/"+paused+"/pause", nil, &p)
	if p.State != "hibernated" {
		t.Fatalf("pause: %+v", p)
	}
	stop(t, second, syscall.SIGKILL)

	thirdSrv := startServer(t, bin, state, flags...)
	c = restartClient{thirdSrv.url}
	if r := c.exec(t, paused, "print(x)"); strings.TrimSpace(r.Stdout) != "41" || r.ExecutionCount != 3 {
		t.Errorf("the hibernated session after a crash: stdout %q, count %d; want 41, 3", r.Stdout, r.ExecutionCount)
	}
	for _, s := range sessions[1:] {
		code, raw := c.call(t, "POST", "/v1/sessions/"+s.id+"/execute", map[string]any{"code": "1"})
		if code != http.StatusConflict || !strings.Contains(string(raw), `"session_lost"`) || !strings.Contains(string(raw), "server stopped") {
			t.Errorf("session %s, running at the crash: HTTP %d %s; want 409 session_lost saying the server stopped", s.id, code, raw)
		}
		c.must(t, http.StatusNoContent, "DELETE", "/v1/sessions/"+s.id, nil, nil)
	}
	c.must(t, http.StatusNoContent, "DELETE", "/v1/sessions/"+paused, nil, nil)
	stop(t, thirdSrv, syscall.SIGTERM)
	if entries, _ := filepath.Glob(filepath.Join(state, "hibernate", "*")); len(entries) > 0 {
		t.Errorf("images left after every session was deleted: %v", entries)
	}
}

// stop signals a server and waits for it to exit: cleanly on SIGTERM.
func stop(t *testing.T, s *paddockProc, sig syscall.Signal) {
	t.Helper()
	if err := s.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	err := s.wait(2 * time.Minute)
	if sig == syscall.SIGTERM && err != nil {
		t.Fatalf("server exit after SIGTERM: %v\n%s", err, s.logs.String())
	}
}

// runscIDs lists the sandboxes under state's runsc root.
func runscIDs(t *testing.T, runscPath, state string) []string {
	t.Helper()
	out, err := exec.Command(runscPath, "--root="+filepath.Join(state, "runsc"), "list", "--quiet").Output()
	if err != nil {
		t.Fatalf("runsc list: %v", err)
	}
	return strings.Fields(string(out))
}

// runE2BSurvive runs a phase of e2b_survive.mjs and returns the line it
// printed last.
func runE2BSurvive(t *testing.T, env []string, args ...string) []byte {
	t.Helper()
	out, err := runClient(t, env, needClients(t), append([]string{"e2b_survive.mjs"}, args...)...)
	if err != nil {
		t.Fatalf("node e2b_survive.mjs %v: %v\n%s", args, err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return []byte(lines[len(lines)-1])
}
