package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// runCmd runs a client command in-process and returns its exit code and
// what it wrote.
func runCmd(t *testing.T, cmd func(context.Context, []string, clientIO) int, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := cmd(t.Context(), args, clientIO{strings.NewReader(stdin), &out, &errOut})
	return code, out.String(), errOut.String()
}

// ndjsonServer answers every request with h after checking nothing; the
// handler writes the events it is given, one a line.
func ndjsonLines(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "application/x-ndjson; charset=utf-8")
	for _, e := range events {
		fmt.Fprintln(w, e)
		w.(http.Flusher).Flush()
	}
}

func TestParseRunFlags(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		lang     string
		progArgs []string
		wantErr  string
	}{
		{args: []string{"prog.py"}, lang: "python"},
		{args: []string{"x.mjs"}, lang: "node"},
		{args: []string{"--language", "node", "x.txt"}, lang: "node"},
		{args: []string{"x.txt", "--language", "node"}, lang: "node"},
		{args: []string{"-c", "print(1)", "--language", "python"}, lang: "python"},
		{args: []string{"--template", "python-slim", "-c", "1"}}, // the template says its language
		{args: []string{"-c", "print(1)"}, lang: "python"},
		{args: []string{"x.rb"}, wantErr: "cannot infer"},
		{args: []string{}, wantErr: "give a FILE"},
		{args: []string{"-c", "1", "a.py"}, wantErr: "not both"},
		{args: []string{"a.py", "b.py"}, wantErr: "one FILE only"},
		{args: []string{"a.py", "--", "b.py", "-x"}, lang: "python", progArgs: []string{"b.py", "-x"}},
		{args: []string{"-c", "1", "--language", "node", "--", "--json"}, lang: "node", progArgs: []string{"--json"}},
		{args: []string{"--bogus", "a.py"}, wantErr: "not defined"},
	} {
		f, err := parseRunFlags(tc.args, io.Discard)
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%q: err %v, want %q", tc.args, err, tc.wantErr)
		case tc.wantErr == "" && err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case tc.wantErr == "" && (f.language != tc.lang || !reflect.DeepEqual(f.args, tc.progArgs) || f.remote.json):
			t.Errorf("%q: language %q, args %q, json %v; want %q, %q", tc.args, f.language, f.args, f.remote.json, tc.lang, tc.progArgs)
		}
	}
	t.Setenv("PADDOCK_URL", "http://example.test:9")
	t.Setenv("PADDOCK_TOKEN", "tok")
	f, err := parseRunFlags([]string{"a.py"}, io.Discard)
	if err != nil || f.remote.url != "http://example.test:9" || f.remote.token != "tok" {
		t.Errorf("env: %+v %v", f.remote, err)
	}
	if code, _, _ := runCmd(t, clientRun, "", "-h"); code != exitOK {
		t.Errorf("-h exits %d", code)
	}
	if code, _, _ := runCmd(t, clientRun, ""); code != exitUsage {
		t.Errorf("no program exits %d, want %d", code, exitUsage)
	}
}

func TestRunExit(t *testing.T) {
	for _, tc := range []struct {
		reason string
		code   int
		want   int
	}{
		{"ok", 0, 0}, {"error", 3, 3}, {"error", 0, 1}, {"error", 300, 1}, {"error", -1, 1},
		{"timeout", 137, 124}, {"oom", 137, 137}, {"output_limit", 0, 120}, {"pids_limit", 1, 121},
		{"disk_limit", 1, 122}, {"killed", 137, 123}, {"interrupted", 137, 125},
		{"sandbox_error", 0, 119}, {"a_reason_from_the_future", 0, 119},
	} {
		if got := runExit(tc.reason, tc.code); got != tc.want {
			t.Errorf("runExit(%q, %d) = %d, want %d", tc.reason, tc.code, got, tc.want)
		}
	}
}

// A run streams each chunk to its own writer as it comes, sends the
// program, its files and stdin, and exits with the program's code.
func TestClientRunStreams(t *testing.T) {
	var got map[string]any
	var gotAuth, gotAccept string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/run" {
			http.Error(w, "unexpected "+r.URL.Path, http.StatusNotFound)
			return
		}
		gotAuth, gotAccept = r.Header.Get("Authorization"), r.Header.Get("Accept")
		_ = json.NewDecoder(r.Body).Decode(&got)
		ndjsonLines(w,
			`{"type":"stdout","text":"one\n"}`,
			`{"type":"keepalive"}`,
			`{"type":"stderr","text":"warn\n"}`,
			`{"type":"stdout","text":"\ufffd\n","base64":"/wo="}`,
			`{"type":"something_new","x":1}`,
			`{"type":"end","stdout":"one\n\ufffd\n","stderr":"warn\n","exit_code":3,"reason":"error"}`)
	}))
	defer srv.Close()
	dir := t.TempDir()
	data := filepath.Join(dir, "data.txt")
	if err := os.WriteFile(data, []byte("payload"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCmd(t, clientRun, "the input", "--url", srv.URL, "--token", "sekrit",
		"--file", data, "--stdin", "--timeout", "2s", "-c", "print(1)", "--language", "python")
	if code != 3 || stdout != "one\n\xff\n" || stderr != "warn\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if gotAuth != "Bearer sekrit" || gotAccept != ndjson {
		t.Errorf("Authorization %q, Accept %q", gotAuth, gotAccept)
	}
	want := map[string]any{"language": "python", "code": "print(1)", "stdin": "the input", "timeout_ms": float64(2000),
		"files": []any{map[string]any{"path": "data.txt", "encoding": "base64",
			"content": base64.StdEncoding.EncodeToString([]byte("payload"))}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("request %v\nwant    %v", got, want)
	}
}

// Each way of getting no usable answer has its exit code.
func TestClientRunFailures(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		want    int
		stderr  string
	}{
		{"auth", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, `{"code":"unauthorized","message":"bad token"}`, http.StatusUnauthorized)
		}, exitAuth, "unauthorized: bad token"},
		{"refused", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, `{"code":"invalid_language","message":"no cobol"}`, http.StatusBadRequest)
		}, exitRefused, "HTTP 400 invalid_language: no cobol"},
		{"server", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, `{"code":"internal","message":"oops"}`, http.StatusInternalServerError)
		}, exitServer, "HTTP 500"},
		{"cut short", func(w http.ResponseWriter, _ *http.Request) {
			ndjsonLines(w, `{"type":"stdout","text":"partial"}`)
		}, exitProtocol, "before its end event"},
		{"garbage", func(w http.ResponseWriter, _ *http.Request) { ndjsonLines(w, `<html>`) }, exitProtocol, "not an event"},
		{"not a stream", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintln(w, `{"stdout":"","exit_code":0,"reason":"ok"}`)
		}, exitProtocol, "older than this client"},
		{"failed mid-run", func(w http.ResponseWriter, _ *http.Request) {
			ndjsonLines(w, `{"type":"end","error":{"code":"sandbox_failed","message":"it broke"}}`)
		}, exitServer, "sandbox_failed: it broke"},
		{"timeout", func(w http.ResponseWriter, _ *http.Request) {
			ndjsonLines(w, `{"type":"end","exit_code":137,"reason":"timeout"}`)
		}, exitTimeout, "the run ended: timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			code, _, stderr := runCmd(t, clientRun, "", "--url", srv.URL, "-c", "1", "--language", "python")
			if code != tc.want || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, tc.want, tc.stderr)
			}
		})
	}
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	if code, _, _ := runCmd(t, clientRun, "", "--url", url, "-c", "1", "--language", "python"); code != exitUnreachable {
		t.Errorf("closed server: exit %d, want %d", code, exitUnreachable)
	}
	if code, _, _ := runCmd(t, clientRun, "", "--url", url, "missing.py"); code != exitLocal {
		t.Errorf("missing FILE: exit %d, want %d", code, exitLocal)
	}
}

// --json asks for the plain answer and prints it as sent.
func TestClientRunJSON(t *testing.T) {
	const answer = `{"stdout":"hi\n","stderr":"","exit_code":0,"reason":"ok"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept") != "application/json" {
			t.Errorf("Accept %q", r.Header.Get("Accept"))
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintln(w, answer)
	}))
	defer srv.Close()
	code, stdout, _ := runCmd(t, clientRun, "", "--url", srv.URL, "--json", "-c", "1", "--language", "python")
	if code != 0 || stdout != answer+"\n" {
		t.Errorf("exit %d, stdout %q", code, stdout)
	}
}

// A path the server sends never leads outside --out.
func TestSaveOutputsStaysInside(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	content := base64.StdEncoding.EncodeToString([]byte("x"))
	var ans runAnswer
	for _, p := range []string{"../../x", "/etc/evil", "a/../../../b", `..\..\c`, "ok/d.txt"} {
		ans.Outputs = append(ans.Outputs, struct {
			Pattern string  `json:"pattern"`
			Path    string  `json:"path"`
			Content *string `json:"content"`
			Error   *struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}{Path: p, Content: &content})
	}
	var log bytes.Buffer
	if err := saveOutputs(out, ans, &log); err != nil {
		t.Fatal(err)
	}
	var files []string
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, _ error) error {
		if !info.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	want := []string{"out/b", "out/c", "out/etc/evil", "out/ok/d.txt", "out/x"}
	if !reflect.DeepEqual(files, want) {
		t.Errorf("files %v, want %v (log %s)", files, want, log.String())
	}
	for _, p := range []string{"", "/", "..", "../"} {
		if _, err := inside(out, p); err == nil {
			t.Errorf("inside(%q) took it", p)
		}
	}
}

func TestCellReader(t *testing.T) {
	in := "\n\nx = 1\ny = 2\n\ndef f():\n    a = 1\n    \n    return a\n\n%quit\nlast"
	r := newCellReader(strings.NewReader(in))
	var cells []string
	for {
		c, err := r.next(func(bool) {})
		cells = append(cells, c)
		if err != nil {
			break
		}
	}
	want := []string{"x = 1\ny = 2", "def f():\n    a = 1\n    \n    return a", "%quit", "last"}
	if !reflect.DeepEqual(cells, want) {
		t.Errorf("cells %q\nwant  %q", cells, want)
	}
}

// fakeSessions is a /v1/sessions server with one session whose cells
// answer from script, in order.
type fakeSessions struct {
	mu      sync.Mutex
	script  [][]string
	codes   []string
	deleted bool
}

func (f *fakeSessions) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/sessions":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintln(w, `{"id":"s1","template":"python","execution_count":0}`)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/sessions/s1/execute":
		var body struct{ Code string }
		_ = json.NewDecoder(r.Body).Decode(&body)
		f.codes = append(f.codes, body.Code)
		if len(f.script) == 0 {
			http.Error(w, `{"code":"session_lost","message":"gone"}`, http.StatusConflict)
			return
		}
		events := f.script[0]
		f.script = f.script[1:]
		ndjsonLines(w, events...)
	case r.Method == http.MethodDelete && r.URL.Path == "/v1/sessions/s1":
		f.deleted = true
		w.WriteHeader(http.StatusNoContent)
	default:
		http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusNotFound)
	}
}

func TestClientSession(t *testing.T) {
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nfake"))
	f := &fakeSessions{script: [][]string{
		{`{"type":"stdout","text":"hello\n"}`,
			`{"type":"result","data":{"text/plain":"<Figure>","image/png":"` + png + `"},"metadata":{},"main":false}`,
			`{"type":"result","data":{"text/plain":"42","text/html":"<b>42</b>"},"metadata":{},"main":true,"execution_count":1}`,
			`{"type":"end","execution_count":1,"status":"ok","reason":"ok"}`},
		{`{"type":"error","name":"ZeroDivisionError","value":"division by zero","traceback":[]}`,
			`{"type":"end","execution_count":2,"status":"error","reason":"error"}`},
		{`{"type":"end","execution_count":3,"status":"error","reason":"timeout","state_lost":true,"state_lost_reason":"the kernel was killed","kernel_restarted":true}`},
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	out := t.TempDir()
	code, stdout, stderr := runCmd(t, clientSession, "x = 42\nx\n\n1/0\n\n\nwhile True: pass\n", "--url", srv.URL, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	if !reflect.DeepEqual(f.codes, []string{"x = 42\nx", "1/0", "while True: pass"}) || !f.deleted {
		t.Errorf("cells %q, deleted %v", f.codes, f.deleted)
	}
	pngPath, htmlPath := filepath.Join(out, "out-1-1.png"), filepath.Join(out, "out-1-2.html")
	wantOut := "hello\n[saved " + pngPath + "]\nOut[1]: 42\n[saved " + htmlPath + "]\n"
	if stdout != wantOut {
		t.Errorf("stdout %q\nwant   %q", stdout, wantOut)
	}
	for _, want := range []string{"ZeroDivisionError: division by zero", "the cell ended: timeout", "fresh kernel"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
	}
	if b, err := os.ReadFile(pngPath); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("png: %q %v", b, err)
	}
	if b, err := os.ReadFile(htmlPath); err != nil || string(b) != "<b>42</b>" {
		t.Errorf("html: %q %v", b, err)
	}

	// A lost session ends the loop with the refusal's code, and the
	// session is still deleted; %quit stops before the rest.
	f = &fakeSessions{}
	srv2 := httptest.NewServer(f)
	defer srv2.Close()
	code, _, stderr = runCmd(t, clientSession, "1\n", "--url", srv2.URL, "--out", out)
	if code != exitRefused || !strings.Contains(stderr, "session_lost") || !f.deleted {
		t.Errorf("lost: exit %d, stderr %q, deleted %v", code, stderr, f.deleted)
	}
	f = &fakeSessions{}
	srv3 := httptest.NewServer(f)
	defer srv3.Close()
	if code, _, _ = runCmd(t, clientSession, "%quit\n1\n", "--url", srv3.URL, "--out", out); code != 0 || len(f.codes) != 0 || !f.deleted {
		t.Errorf("%%quit: exit %d, cells %q, deleted %v", code, f.codes, f.deleted)
	}
}

func TestRichBytes(t *testing.T) {
	for _, tc := range []struct {
		mime string
		v    any
		want string
	}{
		{"image/png", base64.StdEncoding.EncodeToString([]byte("bin")), "bin"},
		{"image/svg+xml", "<svg/>", "<svg/>"},
		{"text/html", "<p>", "<p>"},
		{"application/json", map[string]any{"a": 1.0}, "{\n  \"a\": 1\n}"},
		{"application/vnd.x+json", []any{1.0}, "[\n  1\n]"},
	} {
		got, err := richBytes(tc.mime, tc.v)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: %q %v, want %q", tc.mime, got, err, tc.want)
		}
	}
	if _, err := richBytes("image/png", "not base64!"); err == nil {
		t.Error("bad base64 image accepted")
	}
}

func TestClientTemplatesAndPools(t *testing.T) {
	const body = `{"templates":[{"name":"python","language":"python","description":"Python 3","runtime":"runsc",
"limits":{"memory_mb":512,"processes":64,"cpus":1,"disk_mb":64,"timeout_ms":30000},"default_for":["runs","sessions"],
"pool":{"target":2,"floor":1,"ceiling":4,"ready":2,"in_use":1,"starting":0,"waiting":0,"healthy":true,"snapshot":"ready","hits":7,"misses":1,"kernels":1,"kernels_ready":1}}],
"min_limits":{},"max_limits":{}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/templates" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintln(w, body)
	}))
	defer srv.Close()
	code, out, _ := runCmd(t, clientTemplates, "", "--url", srv.URL)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], "NAME ") ||
		strings.Join(strings.Fields(lines[1]), " ") != "python python runsc 512 MB 1 64 64 MB 30s runs,sessions Python 3" {
		t.Errorf("templates: exit %d\n%s", code, out)
	}
	if code, out, _ = runCmd(t, clientTemplates, "", "--url", srv.URL, "--json"); code != 0 || out != body+"\n" {
		t.Errorf("templates --json: exit %d %q", code, out)
	}
	code, out, _ = runCmd(t, clientPools, "", "--url", srv.URL)
	lines = strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 || strings.Join(strings.Fields(lines[1]), " ") != "python 2 1 0 0 2 1..4 1/1 ready 7 1 yes" {
		t.Errorf("pools: exit %d\n%s", code, out)
	}
	code, out, _ = runCmd(t, clientPools, "", "--url", srv.URL, "--json")
	var pools struct {
		Pools []map[string]any `json:"pools"`
	}
	if err := json.Unmarshal([]byte(out), &pools); code != 0 || err != nil || len(pools.Pools) != 1 ||
		pools.Pools[0]["template"] != "python" || pools.Pools[0]["hits"] != 7.0 {
		t.Errorf("pools --json: exit %d %q %v", code, out, err)
	}
	if code, _, _ = runCmd(t, clientPools, "", "--url", srv.URL, "extra"); code != exitUsage {
		t.Errorf("pools extra: exit %d", code)
	}
}

// The client speaks only the public API: its files import the standard
// library alone, never the server's packages.
func TestClientImportsOnlyStdlib(t *testing.T) {
	files, err := filepath.Glob("client*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no client files: %v", err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if first, _, _ := strings.Cut(p, "/"); strings.Contains(first, ".") {
				t.Errorf("%s imports %s: the client uses the standard library and the REST API only", name, p)
			}
		}
	}
}
