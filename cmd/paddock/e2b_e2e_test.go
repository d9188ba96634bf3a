package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/store"
)

// nodeScript runs one of doors/clients/*.mjs with env and returns the
// last line it printed, failing the test with its output otherwise.
func nodeScript(t *testing.T, script string, env ...string) []byte {
	t.Helper()
	out, err := runClient(t, env, needClients(t), script)
	if err != nil {
		t.Fatalf("node %s: %v\nstdout:\n%s", script, err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return []byte(lines[len(lines)-1])
}

// mintToken signs a token for subject with the server's secret.
func mintToken(t *testing.T, secretFile, subject string) string {
	t.Helper()
	var out bytes.Buffer
	if err := tokenCmd([]string{"--subject=" + subject, "--scopes=run,sessions", "--jwt-hs256-secret-file=" + secretFile}, &out); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out.String())
}

// TestE2BSDK drives the real @e2b/code-interpreter SDK (doors/clients/e2b.mjs)
// against a real Paddock on gVisor with auth on: state across cells, a
// plot, an exception, a JavaScript context, commands, files, another
// tenant kept out (H45), kill.
func TestE2BSDK(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte(strings.Repeat("s3cret-for-the-e2b-door-test-", 2)), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newE2EWith(t, "--jwt-hs256-secret-file="+secret)
	got := nodeScript(t, "e2b.mjs",
		"E2B_API_URL="+e.srv.URL, "E2B_SANDBOX_URL="+e.srv.URL,
		"E2B_API_KEY="+mintToken(t, secret, "alice"), "OTHER_KEY="+mintToken(t, secret, "bob"))
	want := `{
		"state": {"text": "42", "count": 2},
		"plot": {"png": "89504e470d0a1a0a", "main": false},
		"error": {"name": "ZeroDivisionError", "value": "division by zero", "traceback": true},
		"stdout": {"logs": ["streamed\n"], "callback": ["streamed\n"]},
		"js": {"language": "javascript", "text": "42", "contexts": ["python", "javascript"]},
		"command": {"stdout": "hi\n", "exitCode": 0},
		"pid": {"pid": true, "same": true},
		"commandFails": {"exitError": true, "exitCode": 3, "stderr": "oops\n"},
		"files": {"read": "hello e2b", "list": ["hello.txt:file:9"], "exists": true, "missing": false,
			"info": "hello.txt:file:/home/user/data/hello.txt", "python": "'hello e2b'"},
		"outside": "InvalidArgumentError",
		"otherTenant": "NotFoundError",
		"noToken": 401,
		"control": {"template": "code-interpreter-v1", "state": "running", "listed": true, "running": true},
		"kill": {"killed": true, "after": "NotFoundError", "again": false}
	}`
	expectReport(t, got, want)
	if left := e.st.Kernels.ListAll(); len(left) != 0 {
		t.Errorf("sessions left after kill: %+v", left)
	}
	e.expectDoorRows(t, "e2b", store.KindCell, "alice", "ok", "error")
}

// TestE2BSDKStuckCell drives the real SDK (doors/clients/e2b_restart.mjs)
// through a cell stuck in native code on a server whose cells time out
// after two seconds: the execution's error names the restart, and the
// sandbox goes on with a fresh kernel that has forgotten x.
func TestE2BSDKStuckCell(t *testing.T) {
	e := newE2EWith(t, "--max-timeout=2s")
	got := nodeScript(t, "e2b_restart.mjs", "E2B_API_URL="+e.srv.URL, "E2B_SANDBOX_URL="+e.srv.URL, "E2B_API_KEY=unused")
	want := `{
		"set": {"error": null, "count": 1},
		"stuck": {"name": "KernelRestarted", "value": "Kernel was restarted: the cell did not stop when interrupted at its timeout, so its kernel was killed; the context's variables, imports and files are gone"},
		"next": {"text": "2", "count": 1, "error": null},
		"gone": {"name": "NameError"}
	}`
	var g, w map[string]any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("script printed %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

// expectReport compares a client script's JSON report, key by key, with
// want: every key of want must be in it with that value.
func expectReport(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w map[string]any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("script printed %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	for k := range w {
		if !reflect.DeepEqual(g[k], w[k]) {
			gj, _ := json.Marshal(g[k])
			wj, _ := json.Marshal(w[k])
			t.Errorf("%s: got %s\n\twant %s", k, gj, wj)
		}
	}
}
