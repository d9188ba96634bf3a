package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// sendRaw sends body as is (nil: none) and returns the status and body.
func (e *e2e) sendRaw(t *testing.T, method, path string, body []byte) (int, []byte) {
	t.Helper()
	return sendTo(t, method, e.srv.URL+path, body)
}

// sendTo sends body (none when nil) to url and returns the answer's
// status and body.
func sendTo(t *testing.T, method, url string, body []byte) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// errorCode is the code of an error body, or "" when there is none.
func errorCode(raw []byte) string {
	var b struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(raw, &b)
	return b.Code
}

// sandboxText are words of the agent's own errors; no answer repeats them.
var sandboxText = []string{"openat", "renameat", ".paddock-", "mkdirat", "bad run request", "escapes from parent"}

// checkRefused checks a refusal's status and code, and that its message
// is the API's, not the sandbox's.
func checkRefused(t *testing.T, what string, status int, raw []byte, wantStatus int, wantCode string) {
	t.Helper()
	if status != wantStatus || errorCode(raw) != wantCode {
		t.Errorf("%s: HTTP %d %s, want %d %s", what, status, raw, wantStatus, wantCode)
	}
	for _, w := range sandboxText {
		if bytes.Contains(raw, []byte(w)) {
			t.Errorf("%s: the answer repeats the sandbox's text %q: %s", what, w, raw)
		}
	}
}

// Every file request a session's code or its client can make fail inside
// the sandbox answers a 4xx with its own code, and the session works on.
func TestE2ESessionFileErrors(t *testing.T) {
	e := newE2E(t)
	id := e.newSession(t, map[string]any{"language": "python"})
	files := "/v1/sessions/" + id + "/files"
	q := url.QueryEscape

	// The session's own code leaves its files in every awkward state.
	setup := e.exec(t, id, "import os\n"+
		"os.makedirs('dir/sub')\n"+
		"open('file.txt', 'w').write('x')\n"+
		"os.symlink('/etc', 'etc-link')\n"+
		"os.symlink('loop', 'loop')\n"+
		"os.symlink('missing', 'dangling')\n"+
		"os.mkfifo('fifo')\n"+
		"import socket; socket.socket(socket.AF_UNIX).bind('sock')\n"+
		"open('secret', 'w').write('s'); os.chmod('secret', 0)\n"+
		"open('huge', 'wb').write(b'x' * (10 << 20 | 1))\n"+ // one byte over --max-body
		"print('ready')")
	if setup.Stdout != "ready\n" {
		t.Fatalf("setup: %+v", setup)
	}
	// 10004 entries, a quarter per cell: each cell has the whole timeout.
	e.exec(t, id, "os.mkdir('many')")
	for b := range 4 {
		code := fmt.Sprintf("for i in range(%d, %d): os.mknod('many/%%d' %% i)\nprint('ready')", b*2501, (b+1)*2501)
		if r := e.exec(t, id, code); r.Stdout != "ready\n" {
			t.Fatalf("making entries: %+v", r)
		}
	}
	long := strings.Repeat("n", 256) // one byte more than a name may have

	tests := []struct {
		name       string
		method     string
		target     string
		wantStatus int
		wantCode   string
	}{
		{"write a name too long", "PUT", files + "?path=" + long, 400, "name_too_long"},
		{"write under a name too long", "PUT", files + "?path=dir/" + long + "/x", 400, "name_too_long"},
		{"read a name too long", "GET", files + "?path=" + long, 400, "name_too_long"},
		{"list a name too long", "GET", files + "?list=" + long, 400, "name_too_long"},
		{"write under a file", "PUT", files + "?path=file.txt/x", 409, "not_a_directory"},
		{"read under a file", "GET", files + "?path=file.txt/x", 409, "not_a_directory"},
		{"list a file", "GET", files + "?list=file.txt", 409, "not_a_directory"},
		{"write onto a directory", "PUT", files + "?path=dir", 409, "is_a_directory"},
		{"read a directory", "GET", files + "?path=dir", 409, "is_a_directory"},
		{"read a pipe", "GET", files + "?path=fifo", 409, "not_a_regular_file"},
		{"read a socket", "GET", files + "?path=sock", 409, "not_a_regular_file"},
		{"read a link loop", "GET", files + "?path=loop", 409, "symlink_loop"},
		{"write under a link loop", "PUT", files + "?path=loop/x", 409, "symlink_loop"},
		{"list a link loop", "GET", files + "?list=loop", 409, "symlink_loop"},
		{"read through a link out", "GET", files + "?path=etc-link/passwd", 400, "invalid_path"},
		{"write through a link out", "PUT", files + "?path=etc-link/x", 400, "invalid_path"},
		{"list through a link out", "GET", files + "?list=etc-link", 400, "invalid_path"},
		{"read the parent", "GET", files + "?path=" + q("../x"), 400, "invalid_path"},
		{"write an absolute path", "PUT", files + "?path=" + q("/etc/x"), 400, "invalid_path"},
		{"write an unclean path", "PUT", files + "?path=" + q("dir//x"), 400, "invalid_path"},
		{"read a NUL", "GET", files + "?path=a%00b", 400, "invalid_path"},
		{"write an empty path", "PUT", files + "?path=", 400, "invalid_path"},
		{"read an unreadable file", "GET", files + "?path=secret", 403, "permission_denied"},
		{"read a missing file", "GET", files + "?path=missing", 404, "file_not_found"},
		{"list a missing directory", "GET", files + "?list=missing", 404, "file_not_found"},
		{"write under a dangling link", "PUT", files + "?path=dangling/x", 404, "file_not_found"},
		{"read a file over --max-body", "GET", files + "?path=huge", 400, "file_too_large"},
		{"list over 10000 entries", "GET", files + "?list=many", 400, "too_many_entries"},
	}
	for _, tc := range tests {
		var body []byte
		if tc.method == "PUT" {
			body = []byte("content")
		}
		status, raw := e.sendRaw(t, tc.method, tc.target, body)
		checkRefused(t, tc.name, status, raw, tc.wantStatus, tc.wantCode)
	}

	// Nothing was written through the link out.
	if r := e.exec(t, id, "print(os.path.exists('/etc/x'), os.path.exists('/etc/passwd'))"); r.Stdout != "False True\n" {
		t.Errorf("/etc/x and /etc/passwd exist: %q, want False True", r.Stdout)
	}

	// The session's own writes fill its disk; a write through the API then
	// does not fit.
	fill := e.exec(t, id, "import os\n"+
		"fd = os.open('filler', os.O_WRONLY | os.O_CREAT, 0o644)\n"+
		"for size in (1 << 20, 4096, 1):\n"+
		" try:\n"+
		"  while True: os.write(fd, b'x' * size)\n"+
		" except OSError as e: err = e.errno\n"+
		"os.close(fd)\n"+
		"print(err)")
	if fill.Stdout != "28\n" { // ENOSPC
		t.Fatalf("filling the disk: %+v, want errno 28", fill)
	}
	t.Logf("filling the disk took %.0f ms", fill.Timing.ExecMS)
	status, raw := e.sendRaw(t, "PUT", files+"?path=more", bytes.Repeat([]byte("m"), 1<<20))
	checkRefused(t, "write on a full disk", status, raw, 413, "disk_full")

	// Freed, the session takes the same write, and its kernel never noticed.
	if r := e.exec(t, id, "os.remove('filler'); x = 41; x + 1"); mainText(r) != "42" {
		t.Fatalf("after the refusals: %+v", r)
	}
	if status, raw := e.sendRaw(t, "PUT", files+"?path=more", bytes.Repeat([]byte("m"), 1<<20)); status != http.StatusNoContent {
		t.Fatalf("write after freeing the disk: HTTP %d %s", status, raw)
	}
	if status, raw := e.sendRaw(t, "GET", files+"?path=more", nil); status != http.StatusOK || len(raw) != 1<<20 {
		t.Errorf("read back: HTTP %d, %d bytes, want 200 and %d", status, len(raw), 1<<20)
	}
}

// A run's files the sandbox cannot write are refused with the same codes;
// nothing runs.
func TestE2ERunFileErrors(t *testing.T) {
	e := newE2EWith(t, "--max-body=33554432") // room for more files than a 16 MB disk holds
	long := strings.Repeat("n", 256)
	file := func(p, content string) map[string]any { return map[string]any{"path": p, "content": content} }
	tests := []struct {
		name       string
		files      []map[string]any
		limits     map[string]any
		wantStatus int
		wantCode   string
	}{
		{name: "a name too long", files: []map[string]any{file(long, "x")}, wantStatus: 400, wantCode: "name_too_long"},
		{name: "a directory name too long", files: []map[string]any{file(long+"/x", "x")}, wantStatus: 400, wantCode: "name_too_long"},
		{name: "a file under a file", files: []map[string]any{file("a", "x"), file("a/b", "y")}, wantStatus: 409, wantCode: "not_a_directory"},
		{name: "a file onto a directory", files: []map[string]any{file("a/b", "y"), file("a", "x")}, wantStatus: 409, wantCode: "is_a_directory"},
		{name: "a parent path", files: []map[string]any{file("../x", "x")}, wantStatus: 400, wantCode: "invalid_path"},
		{name: "more than the disk holds", files: []map[string]any{file("big", strings.Repeat("x", 17<<20))},
			limits: map[string]any{"disk_mb": 16}, wantStatus: 413, wantCode: "disk_full"},
	}
	for _, tc := range tests {
		body := map[string]any{"language": "python", "code": "open('ran', 'w'); print('ran')", "files": tc.files}
		if tc.limits != nil {
			body["limits"] = tc.limits
		}
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		status, raw := e.sendRaw(t, "POST", "/v1/run", b)
		checkRefused(t, tc.name, status, raw, tc.wantStatus, tc.wantCode)
	}
	// The server runs on.
	if code, r := e.post(t, map[string]any{"language": "python", "code": "print(42)"}); code != http.StatusOK || r.Stdout != "42\n" {
		t.Errorf("run after the refusals: HTTP %d %+v", code, r)
	}
}
