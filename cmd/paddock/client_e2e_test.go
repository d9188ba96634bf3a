package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestE2EClient drives the paddock client commands, in-process, against
// the whole server on real gVisor.
func TestE2EClient(t *testing.T) {
	e := newE2E(t)
	url := "--url=" + e.srv.URL

	t.Run("run exit code", func(t *testing.T) {
		code, stdout, stderr := runCmd(t, clientRun, "", url, "--language=python",
			"-c", "import sys\nprint('out', flush=True)\nprint('err', file=sys.stderr)\nsys.exit(3)")
		if code != 3 || stdout != "out\n" || stderr != "err\n" {
			t.Errorf("exit %d, stdout %q, stderr %q; want 3, out, err", code, stdout, stderr)
		}
	})
	t.Run("run from a file", func(t *testing.T) {
		dir := t.TempDir()
		prog := filepath.Join(dir, "prog.js")
		if err := os.WriteFile(prog, []byte("console.log(6 * 7)"), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, stdout, stderr := runCmd(t, clientRun, "", url, prog); code != 0 || stdout != "42\n" {
			t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		code, stdout, stderr := runCmd(t, clientRun, "", url, "--language=python", "--timeout=1s",
			"-c", "print('started', flush=True)\nwhile True: pass")
		if code != exitTimeout || stdout != "started\n" || !strings.Contains(stderr, "the run ended: timeout") {
			t.Errorf("exit %d, stdout %q, stderr %q; want %d", code, stdout, stderr, exitTimeout)
		}
	})
	t.Run("file and stdin", func(t *testing.T) {
		dir := t.TempDir()
		data := filepath.Join(dir, "data.txt")
		if err := os.WriteFile(data, []byte("from a file"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := runCmd(t, clientRun, "from stdin", url, "--language=python", "--file="+data, "--stdin",
			"-c", "import sys\nprint(open('data.txt').read(), sys.stdin.read().upper())")
		if code != 0 || stdout != "from a file FROM STDIN\n" {
			t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
	})
	t.Run("outputs and args", func(t *testing.T) {
		dir := t.TempDir()
		code, _, stderr := runCmd(t, clientRun, "", url, "--output=out/*.txt", "--out="+dir,
			"-c", "import os, sys\nos.makedirs('out')\nopen('out/r.txt', 'w').write(' '.join(sys.argv[1:]))", "--", "a", "-b")
		saved := filepath.Join(dir, "out", "r.txt")
		if b, err := os.ReadFile(saved); code != 0 || err != nil || string(b) != "a -b" || !strings.Contains(stderr, "saved "+saved) {
			t.Errorf("exit %d, %s: %q %v, stderr %q", code, saved, b, err, stderr)
		}
	})
	t.Run("run json", func(t *testing.T) {
		code, stdout, _ := runCmd(t, clientRun, "", url, "--json", "--language=node", "-c", "process.exit(5)")
		var ans runAnswer
		if err := json.Unmarshal([]byte(stdout), &ans); err != nil || code != 5 || ans.ExitCode != 5 || ans.Reason != "error" {
			t.Errorf("exit %d, %q %v", code, stdout, err)
		}
	})
	t.Run("session", func(t *testing.T) {
		out := t.TempDir()
		cells := "x = 41\n\nprint(x + 1)\n\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [1, 4, 9])\n\nx\n"
		code, stdout, stderr := runCmd(t, clientSession, cells, url, "--out="+out)
		if code != 0 {
			t.Fatalf("exit %d, stderr %s", code, stderr)
		}
		t.Logf("session stdout:\n%s", stdout)
		if !strings.HasPrefix(stdout, "42\n") || !strings.Contains(stdout, "Out[4]: 41\n") {
			t.Errorf("stdout %q", stdout)
		}
		png := filepath.Join(out, "out-3-1.png")
		if b, err := os.ReadFile(png); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
			t.Errorf("%s: %v (stdout %q)", png, err, stdout)
		}
		if !strings.Contains(stdout, "[saved "+png+"]") {
			t.Errorf("stdout does not name %s: %q", png, stdout)
		}
		var list struct {
			Sessions []json.RawMessage `json:"sessions"`
		}
		resp, err := http.Get(e.srv.URL + "/v1/sessions")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list.Sessions) != 0 {
			t.Errorf("sessions left: %v %v", list.Sessions, err)
		}
	})
	t.Run("templates and pools", func(t *testing.T) {
		code, stdout, _ := runCmd(t, clientTemplates, "", url)
		t.Logf("templates:\n%s", stdout)
		if code != 0 || !strings.Contains(stdout, "\npython ") || !strings.Contains(stdout, "\nnode ") {
			t.Errorf("templates: exit %d\n%s", code, stdout)
		}
		code, stdout, _ = runCmd(t, clientPools, "", url)
		t.Logf("pools:\n%s", stdout)
		if code != 0 || len(strings.Split(strings.TrimSpace(stdout), "\n")) != 3 {
			t.Errorf("pools: exit %d\n%s", code, stdout)
		}
	})
}

// TestE2ERunStream reads POST /v1/run's NDJSON as it comes from a real
// sandbox: a chunk printed before the program stops making progress
// arrives, then the end event with the whole answer.
func TestE2ERunStream(t *testing.T) {
	e := newE2E(t)
	body := `{"language":"python","timeout_ms":1000,"code":"import sys\nprint('first', flush=True)\nprint('oops', file=sys.stderr, flush=True)\nwhile True: pass"}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, e.srv.URL+"/v1/run", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/x-ndjson")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/x-ndjson") {
		t.Fatalf("HTTP %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var types []string
	var stdout, stderr string
	var end struct {
		Stdout   string `json:"stdout"`
		ExitCode int    `json:"exit_code"`
		Reason   string `json:"reason"`
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var ev struct{ Type, Text string }
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		switch ev.Type {
		case "keepalive":
			continue
		case "stdout":
			stdout += ev.Text
		case "stderr":
			stderr += ev.Text
		case "end":
			if err := json.Unmarshal(sc.Bytes(), &end); err != nil {
				t.Fatal(err)
			}
		}
		types = append(types, ev.Type)
	}
	if len(types) < 3 || types[len(types)-1] != "end" {
		t.Fatalf("events %q, want chunks then end", types)
	}
	if stdout != "first\n" || stderr != "oops\n" || end.Reason != "timeout" || end.Stdout != "first\n" {
		t.Errorf("stdout %q, stderr %q, end %+v", stdout, stderr, end)
	}
}
