package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

type sessionInfo struct {
	ID       string `json:"id"`
	Language string `json:"language"`
}

type execResp struct {
	ExecutionCount int    `json:"execution_count"`
	Stdout         string `json:"stdout"`
	Stderr         string `json:"stderr"`
	Results        []struct {
		Data map[string]any `json:"data"`
		Main bool           `json:"main"`
	} `json:"results"`
	Error *struct {
		Name      string   `json:"name"`
		Value     string   `json:"value"`
		Traceback []string `json:"traceback"`
	} `json:"error"`
	Status          string `json:"status"`
	Reason          string `json:"reason"`
	StateLost       bool   `json:"state_lost"`
	StateLostReason string `json:"state_lost_reason"`
	KernelRestarted bool   `json:"kernel_restarted"`
	Warm            bool   `json:"warm"`
	Start           string `json:"start"`
	Timing          struct {
		QueueMS   float64 `json:"queue_ms"`
		AcquireMS float64 `json:"acquire_ms"`
		StartMS   float64 `json:"start_ms"`
		ExecMS    float64 `json:"exec_ms"`
		TotalMS   float64 `json:"total_ms"`
	} `json:"timing"`
}

func (e *e2e) do(t *testing.T, method, path string, body any, accept string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

func (e *e2e) newSession(t *testing.T, body map[string]any) string {
	t.Helper()
	code, raw := e.do(t, "POST", "/v1/sessions", body, "")
	if code != http.StatusCreated {
		t.Fatalf("create session: HTTP %d %s", code, raw)
	}
	var s sessionInfo
	if err := json.Unmarshal(raw, &s); err != nil || s.ID == "" {
		t.Fatalf("create session: %s", raw)
	}
	t.Cleanup(func() { e.do(t, "DELETE", "/v1/sessions/"+s.ID, nil, "") })
	return s.ID
}

func (e *e2e) exec(t *testing.T, id, code string) execResp {
	t.Helper()
	return e.execFor(t, id, code, 30000)
}

// execFor runs one cell with a timeout of timeoutMS.
func (e *e2e) execFor(t *testing.T, id, code string, timeoutMS int) execResp {
	t.Helper()
	status, raw := e.do(t, "POST", "/v1/sessions/"+id+"/execute", map[string]any{"code": code, "timeout_ms": timeoutMS}, "")
	if status != http.StatusOK {
		t.Fatalf("execute %q: HTTP %d %s", code, status, raw)
	}
	var r execResp
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
	checkExecTiming(t, r, raw)
	return r
}

// checkExecTiming checks an execute's sandbox description and phases: the
// session's sandbox was made once, so acquire and start are zero, and the
// cell's own time is part of the total.
func checkExecTiming(t *testing.T, r execResp, raw []byte) {
	t.Helper()
	tm := r.Timing
	switch {
	case r.Start != "kernel" && r.Start != "pool" && r.Start != "restore" && r.Start != "cold" && r.Start != "wake":
		t.Errorf("execute start = %q, want kernel, pool, restore, cold or wake: %s", r.Start, raw)
	case r.Warm != (r.Start == "pool" || r.Start == "kernel"):
		t.Errorf("execute warm = %v with start %q: %s", r.Warm, r.Start, raw)
	case tm.AcquireMS != 0 || tm.StartMS != 0:
		t.Errorf("execute acquire_ms/start_ms = %v/%v, want 0: %s", tm.AcquireMS, tm.StartMS, raw)
	case tm.ExecMS <= 0 || tm.QueueMS < 0 || tm.TotalMS < tm.ExecMS+tm.QueueMS:
		t.Errorf("execute timing %+v: want exec > 0 and total >= queue + exec: %s", tm, raw)
	}
}

func mainText(r execResp) string {
	for _, res := range r.Results {
		if res.Main {
			s, _ := res.Data["text/plain"].(string)
			return s
		}
	}
	return ""
}

func TestE2ESessionsPython(t *testing.T) {
	e := newE2E(t)
	id := e.newSession(t, map[string]any{"language": "python"})

	e.exec(t, id, "x = 41")
	if r := e.exec(t, id, "x + 1"); mainText(r) != "42" || r.ExecutionCount != 2 {
		t.Errorf("x + 1 = %q (count %d), want 42 (count 2): %+v", mainText(r), r.ExecutionCount, r)
	}

	r := e.exec(t, id, "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [1, 4, 9])")
	var png []byte
	for _, res := range r.Results {
		if s, ok := res.Data["image/png"].(string); ok {
			png, _ = base64.StdEncoding.DecodeString(s)
		}
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("plot gave no PNG: %+v", r)
	}

	r = e.exec(t, id, "import pandas as pd\npd.DataFrame({'a': [1, 2], 'b': [3, 4]})")
	html := ""
	for _, res := range r.Results {
		if s, ok := res.Data["text/html"].(string); ok && res.Main {
			html = s
		}
	}
	if !strings.Contains(html, "<table") {
		t.Errorf("DataFrame gave no HTML table: %+v", r)
	}

	r = e.exec(t, id, "1/0")
	if r.Error == nil || r.Error.Name != "ZeroDivisionError" || r.Status != "error" || len(r.Error.Traceback) == 0 {
		t.Errorf("1/0: %+v", r)
	}

	if r := e.exec(t, id, "import os\nos.system('echo from-child')"); !strings.Contains(r.Stdout, "from-child") {
		t.Errorf("child output: stdout %q", r.Stdout)
	}

	// Interrupt a runaway cell once it runs (its first line streamed);
	// earlier state survives.
	req, _ := http.NewRequest("POST", e.srv.URL+"/v1/sessions/"+id+"/execute",
		strings.NewReader(`{"code":"print('spinning', flush=True)\nwhile True: pass","timeout_ms":30000}`))
	req.Header.Set("Accept", "application/x-ndjson")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	interrupted := false
	var end execResp
	for sc.Scan() {
		var ev struct{ Type, Text string }
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("bad NDJSON line %q", sc.Text())
		}
		if ev.Type == "stdout" && ev.Text == "spinning\n" && !interrupted {
			if code, raw := e.do(t, "POST", "/v1/sessions/"+id+"/interrupt", nil, ""); code >= 300 {
				t.Fatalf("interrupt: HTTP %d %s", code, raw)
			}
			interrupted = true
		}
		if ev.Type == "end" {
			if err := json.Unmarshal(sc.Bytes(), &end); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !interrupted || end.Reason != "interrupted" {
		t.Errorf("runaway cell: interrupt sent %v, end %+v; want interrupted", interrupted, end)
	}
	if r := e.exec(t, id, "x"); mainText(r) != "41" {
		t.Errorf("after interrupt x = %q, want 41", mainText(r))
	}

	if code, raw := e.do(t, "POST", "/v1/sessions/"+id+"/restart", nil, ""); code != http.StatusOK {
		t.Fatalf("restart: HTTP %d %s", code, raw)
	}
	if r := e.exec(t, id, "x"); r.Error == nil || r.Error.Name != "NameError" {
		t.Errorf("after restart x: %+v, want NameError", r)
	}
}

func TestE2ESessionsNode(t *testing.T) {
	e := newE2E(t)
	id := e.newSession(t, map[string]any{"language": "node"})
	e.exec(t, id, "const a = 2")
	if r := e.exec(t, id, "a * 21"); mainText(r) != "42" {
		t.Errorf("a * 21 = %q: %+v", mainText(r), r)
	}
	if r := e.exec(t, id, "await new Promise(r => setTimeout(() => r(7), 10))"); mainText(r) != "7" {
		t.Errorf("await = %q: %+v", mainText(r), r)
	}
	if r := e.exec(t, id, "throw new TypeError('nope')"); r.Error == nil || r.Error.Name != "TypeError" {
		t.Errorf("throw: %+v", r)
	}
}

func TestE2ESessionsStreamIsolationAndLoss(t *testing.T) {
	e := newE2E(t)
	a := e.newSession(t, map[string]any{"language": "python"})
	b := e.newSession(t, map[string]any{"language": "python"})

	// Streaming: the first stdout event arrives long before the end.
	req, _ := http.NewRequest("POST", e.srv.URL+"/v1/sessions/"+a+"/execute",
		strings.NewReader(`{"code":"import time\nfor i in range(3):\n    print(i, flush=True)\n    time.sleep(0.5)"}`))
	req.Header.Set("Accept", "application/x-ndjson")
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	var firstStdout, end time.Duration
	for sc.Scan() {
		var ev struct{ Type string }
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("bad NDJSON line %q", sc.Text())
		}
		if ev.Type == "stdout" && firstStdout == 0 {
			firstStdout = time.Since(start)
		}
		if ev.Type == "end" {
			end = time.Since(start)
		}
	}
	resp.Body.Close()
	if firstStdout == 0 || end == 0 || end-firstStdout < 500*time.Millisecond {
		t.Errorf("first stdout at %v, end at %v: output was not streamed", firstStdout, end)
	}

	// Two sessions never see each other's variables or files.
	e.exec(t, a, "secret = 'A'\nopen('/workspace/secret-A', 'w').write('A')")
	r := e.exec(t, b, "import os\nprint('secret' in globals(), os.path.exists('/workspace/secret-A'))")
	if r.Stdout != "False False\n" {
		t.Errorf("session B saw A's state: %q", r.Stdout)
	}
	if code, _ := e.do(t, "GET", "/v1/sessions/"+a+"/files?path=secret-A", nil, ""); code != http.StatusOK {
		t.Errorf("reading A's own file: HTTP %d", code)
	}
	if code, _ := e.do(t, "GET", "/v1/sessions/"+b+"/files?path=secret-A", nil, ""); code != http.StatusNotFound {
		t.Errorf("B reading a file only A has: HTTP %d, want 404", code)
	}
	// A symlink to a host file: the canary exists only on the host, with
	// content nothing else has, so a download holding it crossed out.
	canary, err := os.CreateTemp("", "paddock-canary-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(canary.Name())
	secret := fmt.Sprintf("canary-%d-%d", os.Getpid(), time.Now().UnixNano())
	if _, err := canary.WriteString(secret); err != nil {
		t.Fatal(err)
	}
	canary.Close()
	e.exec(t, a, fmt.Sprintf("import os\nos.symlink(%q, '/workspace/out.txt')", canary.Name()))
	if code, raw := e.do(t, "GET", "/v1/sessions/"+a+"/files?path=out.txt", nil, ""); bytes.Contains(raw, []byte(secret)) {
		t.Errorf("the files API followed a planted symlink to the host's %s: HTTP %d %q", canary.Name(), code, raw)
	}
	if code, raw := e.do(t, "GET", "/v1/sessions/"+a+"/files", nil, ""); bytes.Contains(raw, []byte(secret)) {
		t.Errorf("the files listing shows the host canary: HTTP %d %q", code, raw)
	}

	// An OOM kills the kernel: the answer says its state is gone, and the
	// session goes on with a fresh kernel.
	e.exec(t, b, "kept = 1")
	r = e.exec(t, b, "a = []\nwhile True: a.append(bytearray(64 << 20))")
	if r.Status != "aborted" || r.Reason != "oom" || !r.StateLost || !r.KernelRestarted || r.StateLostReason != "the kernel ran out of memory" {
		t.Errorf("memory hog: %+v, want oom, state lost, kernel restarted", r)
	}
	if r := e.exec(t, b, "kept"); r.Error == nil || r.Error.Name != "NameError" || r.ExecutionCount != 1 {
		t.Errorf("after OOM: %+v, want NameError at count 1 on the fresh kernel", r)
	}

	// An expired session answers 404.
	// Its expiry is an event the test waits for; the bound only ends a
	// test whose session never expires.
	c := e.newSession(t, map[string]any{"language": "python", "ttl_s": 1})
	expired := time.Now().Add(time.Minute)
	for {
		code, raw := e.do(t, "GET", "/v1/sessions/"+c, nil, "")
		if code == http.StatusNotFound {
			break
		}
		if code != http.StatusOK || time.Now().After(expired) {
			t.Fatalf("session with ttl_s 1: HTTP %d %s, want 404 within a minute", code, raw)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
