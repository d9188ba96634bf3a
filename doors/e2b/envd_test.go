package e2bdoor

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/runner"
)

func TestWorkspacePath(t *testing.T) {
	for _, tc := range []struct{ in, rel, err string }{
		{"/home/user", ".", ""},
		{"/home/user/", ".", ""},
		{"/home/user/a.txt", "a.txt", ""},
		{"a/b.txt", "a/b.txt", ""},
		{"/workspace/x", "x", ""},
		{"/home/user/a/../b", "b", ""},
		{"/home/user/../../etc/passwd", "", `path "/home/user/../../etc/passwd" is outside /home/user: Paddock serves only the sandbox's workspace (/workspace inside it), as /home/user`},
		{"/tmp/x", "", `path "/tmp/x" is outside /home/user: Paddock serves only the sandbox's workspace (/workspace inside it), as /home/user`},
		{"/home/username", "", `path "/home/username" is outside /home/user: Paddock serves only the sandbox's workspace (/workspace inside it), as /home/user`},
		{"", "", "path is required"},
		{"a\x00b", "", "path must not contain a NUL byte"},
	} {
		rel, err := workspacePath(tc.in)
		if msg := errString(err); rel != tc.rel || msg != tc.err {
			t.Errorf("workspacePath(%q) = %q, %q; want %q, %q", tc.in, rel, msg, tc.rel, tc.err)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func multipartBody(t *testing.T, files map[string]string) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for name, content := range files {
		w, err := mw.CreateFormFile("file", name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(content))
	}
	mw.Close()
	return buf.Bytes(), mw.FormDataContentType()
}

func TestFilesRoundTrip(t *testing.T) {
	td := newTestDoor(t, Config{})
	sa := td.create("alice", nil)
	body, ct := multipartBody(t, map[string]string{"/home/user/data/a.txt": "hello"})
	a := td.do("POST", "/files?path=/home/user/data/a.txt", body, with(envd(sa), "Content-Type", ct))
	if a.code != 200 || string(a.body) != `[{"path":"/home/user/data/a.txt","name":"a.txt","type":"file"}]` {
		t.Fatalf("write: HTTP %d %s", a.code, a.body)
	}
	a = td.do("POST", "/files?path=b.bin", []byte{0, 1, 2}, with(envd(sa), "Content-Type", "application/octet-stream"))
	if a.code != 200 || string(a.body) != `[{"path":"/home/user/b.bin","name":"b.bin","type":"file"}]` {
		t.Fatalf("octet write: HTTP %d %s", a.code, a.body)
	}
	body, ct = multipartBody(t, map[string]string{"c.txt": "c"})
	if a := td.do("POST", "/files", body, with(envd(sa), "Content-Type", ct)); a.code != 200 {
		t.Fatalf("named write: HTTP %d %s", a.code, a.body)
	}
	if got := string(td.core.sessions["s01"].files["data/a.txt"]); got != "hello" {
		t.Fatalf("stored %q", got)
	}
	a = td.do("GET", "/files?path=/home/user/data/a.txt&username=user", nil, envd(sa))
	if a.code != 200 || string(a.body) != "hello" || a.header.Get("Content-Type") != "application/octet-stream" {
		t.Fatalf("read: HTTP %d %s", a.code, a.body)
	}
	a = td.do("GET", "/files?path=/home/user/missing", nil, envd(sa))
	if a.code != 404 || string(a.body) != `{"code":404,"message":"file missing not found"}` {
		t.Fatalf("missing: HTTP %d %s", a.code, a.body)
	}
	a = td.do("GET", "/files?path=/etc/passwd", nil, envd(sa))
	if a.code != 400 || string(a.body) != `{"code":400,"message":"path \"/etc/passwd\" is outside /home/user: Paddock serves only the sandbox's workspace (/workspace inside it), as /home/user"}` {
		t.Fatalf("outside: HTTP %d %s", a.code, a.body)
	}
}

func TestFileLimits(t *testing.T) {
	td := newTestDoor(t, Config{MaxFileBytes: 8})
	sa := td.create("alice", nil)
	a := td.do("POST", "/files?path=a", []byte("123456789"), with(envd(sa), "Content-Type", "application/octet-stream"))
	if a.code != 413 || string(a.body) != `{"code":413,"message":"upload over 8 bytes"}` {
		t.Fatalf("octet: HTTP %d %s", a.code, a.body)
	}
	body, ct := multipartBody(t, map[string]string{"a": "12345", "b": "12345"})
	a = td.do("POST", "/files", body, with(envd(sa), "Content-Type", ct))
	if a.code != 413 || string(a.body) != `{"code":413,"message":"upload over 8 bytes"}` {
		t.Fatalf("multipart total: HTTP %d %s", a.code, a.body)
	}
	a = td.do("POST", "/files?path=a", []byte("1"), with(envd(sa), "Content-Type", "text/plain"))
	if a.code != 400 || string(a.body) != `{"code":400,"message":"content type \"text/plain\": send multipart/form-data or application/octet-stream"}` {
		t.Fatalf("text/plain: HTTP %d %s", a.code, a.body)
	}
	a = td.do("POST", "/files?path=/home/user/", []byte("1"), with(envd(sa), "Content-Type", "application/octet-stream"))
	if a.code != 400 || string(a.body) != `{"code":400,"message":"path \"/home/user/\" names a directory, not a file"}` {
		t.Fatalf("dir: HTTP %d %s", a.code, a.body)
	}
	if n := len(td.core.sessions["s01"].files); n != 0 {
		t.Fatalf("%d files written", n)
	}
}

func rpc(sa sandboxAnswer) map[string]string {
	return with(envd(sa), "Content-Type", "application/json")
}

func TestFilesystemListAndStat(t *testing.T) {
	td := newTestDoor(t, Config{})
	sa := td.create("alice", nil)
	td.core.sessions["s01"].files["a.txt"] = []byte("hello")
	td.core.sessions["s01"].files["d/b.txt"] = []byte("b")
	for _, tc := range []struct {
		method string
		body   any
		code   int
		want   string
	}{
		{"ListDir", map[string]any{"path": "/home/user", "depth": 1}, 200,
			`{"entries":[{"name":"a.txt","type":"FILE_TYPE_FILE","path":"/home/user/a.txt","size":"5","mode":420,"permissions":"-rw-r--r--","owner":"sandbox","group":"sandbox","modifiedTime":"2026-12-01T12:00:00.000000000Z"},` +
				`{"name":"d","type":"FILE_TYPE_DIRECTORY","path":"/home/user/d","size":"0","mode":2147484141,"permissions":"drwxr-xr-x","owner":"sandbox","group":"sandbox"}]}`},
		{"ListDir", map[string]any{"path": "/home/user/d"}, 200,
			`{"entries":[{"name":"b.txt","type":"FILE_TYPE_FILE","path":"/home/user/d/b.txt","size":"1","mode":420,"permissions":"-rw-r--r--","owner":"sandbox","group":"sandbox","modifiedTime":"2026-12-01T12:00:00.000000000Z"}]}`},
		{"Stat", map[string]any{"path": "/home/user/d/b.txt"}, 200,
			`{"entry":{"name":"b.txt","type":"FILE_TYPE_FILE","path":"/home/user/d/b.txt","size":"1","mode":420,"permissions":"-rw-r--r--","owner":"sandbox","group":"sandbox","modifiedTime":"2026-12-01T12:00:00.000000000Z"}}`},
		{"Stat", map[string]any{"path": "/home/user/nope"}, 404, `{"code":"not_found","message":"path /home/user/nope not found"}`},
		{"Stat", map[string]any{"path": "/home/user/x/nope"}, 404, `{"code":"not_found","message":"directory x not found"}`},
		{"Stat", map[string]any{"path": "/etc"}, 400,
			`{"code":"invalid_argument","message":"path \"/etc\" is outside /home/user: Paddock serves only the sandbox's workspace (/workspace inside it), as /home/user"}`},
		{"Watch", map[string]any{}, 501, `{"code":"unimplemented","message":"filesystem.Filesystem/Watch is not served by Paddock's envd"}`},
	} {
		a := td.do("POST", "/filesystem.Filesystem/"+tc.method, tc.body, rpc(sa))
		if a.code != tc.code || string(a.body) != tc.want {
			t.Fatalf("%s %v: HTTP %d %s\nwant %d %s", tc.method, tc.body, a.code, a.body, tc.code, tc.want)
		}
	}
	a := td.do("POST", "/filesystem.Filesystem/ListDir", map[string]any{"path": "/home/user", "depth": 2}, rpc(sa))
	var got struct{ Entries []entryInfo }
	a.json(t, &got)
	if len(got.Entries) != 3 || got.Entries[2].Path != "/home/user/d/b.txt" {
		t.Fatalf("depth 2: %s", a.body)
	}
	// Connect errors for in-sandbox refusals too.
	a = td.do("POST", "/filesystem.Filesystem/Stat", map[string]any{"path": "a"}, with(rpc(sa), "X-Access-Token", "guess"))
	if a.code != 404 || string(a.body) != `{"code":"not_found","message":"sandbox \"s01\" not found"}` {
		t.Fatalf("wrong token: HTTP %d %s", a.code, a.body)
	}
}

// envelope frames a Connect streaming message.
func envelope(flag byte, v any) []byte {
	b, _ := json.Marshal(v)
	out := []byte{flag, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(out[1:], uint32(len(b)))
	return append(out, b...)
}

// envelopes splits a Connect stream into "flag:json" strings.
func envelopes(t *testing.T, b []byte) []string {
	t.Helper()
	var out []string
	for len(b) > 0 {
		if len(b) < 5 {
			t.Fatalf("short envelope %q", b)
		}
		n := binary.BigEndian.Uint32(b[1:5])
		out = append(out, fmt.Sprintf("%d:%s", b[0], b[5:5+n]))
		b = b[5+n:]
	}
	return out
}

func startBody(cmd string) []byte {
	return envelope(0, map[string]any{"process": map[string]any{"cmd": "/bin/bash", "args": []string{"-l", "-c", cmd}, "envs": map[string]string{"B": "2"}}, "stdin": false})
}

func streamHeaders(sa sandboxAnswer) map[string]string {
	return with(envd(sa), "Content-Type", "application/connect+json")
}

func TestProcessStartStreams(t *testing.T) {
	td := newTestDoor(t, Config{})
	sa := td.create("alice", map[string]any{"envVars": map[string]string{"A": "1", "B": "1"}})
	td.core.CommandFunc = func(in core.CommandInput, out runner.OutputFunc) (runner.CommandResult, error) {
		switch in.Argv[3] {
		case "exit 3":
			in.Started(42)
			out(runner.Stderr, []byte("no"))
			return runner.CommandResult{ExitCode: 3, Reason: runner.ReasonError}, nil
		case "sleep 99":
			in.Started(43)
			return runner.CommandResult{ExitCode: 137, Signal: 9, Reason: runner.ReasonTimeout}, nil
		}
		in.Started(41)
		out(runner.Stdout, []byte("hi\n"))
		return runner.CommandResult{ExitCode: 0, Reason: runner.ReasonOK}, nil
	}
	a := td.do("POST", "/process.Process/Start", startBody("echo hi"), streamHeaders(sa))
	want := []string{
		`0:{"event":{"start":{"pid":41}}}`,
		`0:{"event":{"data":{"stdout":"aGkK"}}}`,
		`0:{"event":{"end":{"exitCode":0,"exited":true,"status":"exit status 0"}}}`,
		`2:{}`,
	}
	if got := envelopes(t, a.body); a.code != 200 || a.header.Get("Content-Type") != "application/connect+json" || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("HTTP %d\n%s", a.code, strings.Join(got, "\n"))
	}
	c := td.core.commands[0]
	if strings.Join(c.Argv, " ") != "/bin/bash -l -c echo hi" || c.Dir != "" || c.Env["A"] != "1" || c.Env["B"] != "2" || c.Timeout != 0 {
		t.Fatalf("command %+v", c)
	}
	a = td.do("POST", "/process.Process/Start", startBody("exit 3"), streamHeaders(sa))
	want = []string{
		`0:{"event":{"start":{"pid":42}}}`,
		`0:{"event":{"data":{"stderr":"bm8="}}}`,
		`0:{"event":{"end":{"error":"exit status 3","exitCode":3,"exited":true,"status":"exit status 3"}}}`,
		`2:{}`,
	}
	if got := envelopes(t, a.body); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("exit 3:\n%s", strings.Join(got, "\n"))
	}
	a = td.do("POST", "/process.Process/Start", startBody("sleep 99"), streamHeaders(sa))
	want = []string{
		`0:{"event":{"start":{"pid":43}}}`,
		`0:{"event":{"end":{"error":"timeout: the command was killed at its time limit","exitCode":137,"exited":false,"status":"timeout: the command was killed at its time limit"}}}`,
		`2:{}`,
	}
	if got := envelopes(t, a.body); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("timeout:\n%s", strings.Join(got, "\n"))
	}
	td.core.CommandFunc = func(core.CommandInput, runner.OutputFunc) (runner.CommandResult, error) {
		return runner.CommandResult{}, &core.Error{Kind: core.KindNotFound, Message: "session s01 not found"}
	}
	a = td.do("POST", "/process.Process/Start", startBody("true"), streamHeaders(sa))
	want = []string{
		`2:{"error":{"code":"not_found","message":"session s01 not found"}}`,
	}
	if got := envelopes(t, a.body); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("error:\n%s", strings.Join(got, "\n"))
	}
}

func TestProcessRefusals(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     Config
		body    []byte
		headers func(sandboxAnswer) map[string]string
		want    string
	}{
		{"pty", Config{}, envelope(0, map[string]any{"process": map[string]any{"cmd": "/bin/bash"}, "pty": map[string]any{}}), streamHeaders,
			`2:{"error":{"code":"unimplemented","message":"PTY sessions are not served by Paddock"}}`},
		{"stdin", Config{}, envelope(0, map[string]any{"process": map[string]any{"cmd": "/bin/bash"}, "stdin": true}), streamHeaders,
			`2:{"error":{"code":"unimplemented","message":"stdin for commands is not served by Paddock: pass input in the command line or a file"}}`},
		{"cwd outside", Config{}, envelope(0, map[string]any{"process": map[string]any{"cmd": "/bin/ls", "cwd": "/etc"}}), streamHeaders,
			`2:{"error":{"code":"invalid_argument","message":"path \"/etc\" is outside /home/user: Paddock serves only the sandbox's workspace (/workspace inside it), as /home/user"}}`},
		{"compressed", Config{}, append([]byte{1}, envelope(0, map[string]any{})[1:]...), streamHeaders,
			`2:{"error":{"code":"invalid_argument","message":"request envelope flag 1: compressed messages are not served"}}`},
		{"too large", Config{MaxBodyBytes: 16}, startBody(strings.Repeat("x", 100)), streamHeaders,
			`2:{"error":{"code":"out_of_range","message":"request message over 16 bytes"}}`},
		{"wrong token", Config{}, startBody("true"), func(sa sandboxAnswer) map[string]string {
			return with(streamHeaders(sa), "X-Access-Token", "guess")
		}, `2:{"error":{"code":"not_found","message":"sandbox \"s01\" not found"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			td := newTestDoor(t, tc.cfg)
			sa := td.create("alice", nil)
			a := td.do("POST", "/process.Process/Start", tc.body, tc.headers(sa))
			if got := envelopes(t, a.body); a.code != 200 || strings.Join(got, "\n") != tc.want {
				t.Fatalf("HTTP %d\n%s\nwant\n%s", a.code, strings.Join(got, "\n"), tc.want)
			}
		})
	}
}

func TestMakeDirAndRemoveRunCommands(t *testing.T) {
	td := newTestDoor(t, Config{})
	sa := td.create("alice", nil)
	td.core.CommandFunc = func(core.CommandInput, runner.OutputFunc) (runner.CommandResult, error) {
		return runner.CommandResult{}, nil
	}
	a := td.do("POST", "/filesystem.Filesystem/MakeDir", map[string]any{"path": "/home/user/a/b"}, rpc(sa))
	if a.code != 200 || string(a.body) != `{"entry":{"name":"b","type":"FILE_TYPE_DIRECTORY","path":"/home/user/a/b","size":"0","mode":2147484141,"permissions":"drwxr-xr-x","owner":"sandbox","group":"sandbox"}}` {
		t.Fatalf("MakeDir: HTTP %d %s", a.code, a.body)
	}
	a = td.do("POST", "/filesystem.Filesystem/Remove", map[string]any{"path": "a"}, rpc(sa))
	if a.code != 200 || string(a.body) != `{}` {
		t.Fatalf("Remove: HTTP %d %s", a.code, a.body)
	}
	a = td.do("POST", "/filesystem.Filesystem/Remove", map[string]any{"path": "/home/user"}, rpc(sa))
	if a.code != 400 || string(a.body) != `{"code":"invalid_argument","message":"Remove of the home directory itself is refused"}` {
		t.Fatalf("Remove home: HTTP %d %s", a.code, a.body)
	}
	got := []string{}
	for _, c := range td.core.commands {
		got = append(got, strings.Join(c.Argv, " "))
	}
	if strings.Join(got, "\n") != "/bin/mkdir -p -- /workspace/a/b\n/bin/rm -rf -- /workspace/a" {
		t.Fatalf("commands:\n%s", strings.Join(got, "\n"))
	}
}

func TestProcessDirAndTimeout(t *testing.T) {
	for _, tc := range []struct {
		name    string
		most    time.Duration
		header  string
		cwd     any
		dir     string
		timeout time.Duration
	}{
		{"client's timeout under the maximum", 30 * time.Second, "10000", "/home/user/sub", "sub", 10 * time.Second},
		{"client's timeout past the maximum", 30 * time.Second, "60000", "/home/user", "", 30 * time.Second},
		{"no client timeout", 30 * time.Second, "", "rel/dir", "rel/dir", 30 * time.Second},
		{"no maximum configured", 0, "60000", nil, "", 60 * time.Second},
		// Past a Duration's range: not wrapped round to 448µs.
		{"client's timeout past every range", 30 * time.Second, "18446744073710", nil, "", 30 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			td := newTestDoor(t, Config{MaxCommandTimeout: tc.most})
			sa := td.create("alice", nil)
			td.core.CommandFunc = func(core.CommandInput, runner.OutputFunc) (runner.CommandResult, error) {
				return runner.CommandResult{}, nil
			}
			proc := map[string]any{"cmd": "/bin/pwd"}
			if tc.cwd != nil {
				proc["cwd"] = tc.cwd
			}
			h := streamHeaders(sa)
			if tc.header != "" {
				h = with(h, "Connect-Timeout-Ms", tc.header)
			}
			a := td.do("POST", "/process.Process/Start", envelope(0, map[string]any{"process": proc}), h)
			if a.code != 200 || len(td.core.commands) != 1 {
				t.Fatalf("HTTP %d %q", a.code, a.body)
			}
			if c := td.core.commands[0]; c.Dir != tc.dir || c.Timeout != tc.timeout {
				t.Fatalf("dir %q timeout %s, want %q %s", c.Dir, c.Timeout, tc.dir, tc.timeout)
			}
		})
	}
}
