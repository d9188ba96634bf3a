package e2bdoor

import (
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/runner"
)

// lines drops the timestamps of stdout/stderr lines so that the rest can
// be compared literally.
func lines(body []byte) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(string(body), "\n"), "\n") {
		if i := strings.Index(l, `,"timestamp":"`); i >= 0 {
			l = l[:i] + "}"
		}
		out = append(out, l)
	}
	return out
}

func TestExecuteStreamsNDJSON(t *testing.T) {
	td := newTestDoor(t, Config{})
	sa := td.create("alice", nil)
	td.core.ExecuteFunc = func(id, code string, events func(runner.Event)) (kernels.Execution, error) {
		events(runner.Event{Type: runner.EventStream, Stream: runner.Stdout, Text: "hi\n"})
		events(runner.Event{Type: runner.EventStream, Stream: runner.Stderr, Text: "warn\n"})
		events(runner.Event{Type: runner.EventDisplayData, Data: map[string]any{"image/png": "iVBOR", "text/plain": "<Figure>"}})
		events(runner.Event{Type: runner.EventExecuteResult, ExecutionCount: 3,
			Data: map[string]any{"text/plain": "42", "text/html": "<b>42</b>", "application/json": map[string]any{"a": 1.0},
				"application/vnd.custom": "x"}})
		return kernels.Execution{ExecuteResult: runner.ExecuteResult{ExecutionCount: 3, Status: runner.StatusOK, Reason: runner.ReasonOK}}, nil
	}
	a := td.do("POST", "/execute", map[string]any{"code": "x + 1"}, interp(sa))
	if a.code != 200 || a.header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("HTTP %d %v %s", a.code, a.header, a.body)
	}
	want := []string{
		`{"type":"stdout","text":"hi\n"}`,
		`{"type":"stderr","text":"warn\n"}`,
		`{"is_main_result":false,"png":"iVBOR","text":"\u003cFigure\u003e","type":"result"}`,
		`{"application/vnd.custom":"x","html":"\u003cb\u003e42\u003c/b\u003e","is_main_result":true,"json":{"a":1},"text":"42","type":"result"}`,
		`{"execution_count":3,"type":"number_of_executions"}`,
		`{"type":"end_of_execution"}`,
	}
	if got := lines(a.body); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestExecuteErrorsAndAborts(t *testing.T) {
	td := newTestDoor(t, Config{})
	sa := td.create("alice", nil)
	td.core.ExecuteFunc = func(id, code string, events func(runner.Event)) (kernels.Execution, error) {
		if code == "1/0" {
			events(runner.Event{Type: runner.EventError, Error: &runner.ExecError{Name: "ZeroDivisionError", Value: "division by zero",
				Traceback: []string{"Traceback (most recent call last):", "ZeroDivisionError: division by zero"}}})
			return kernels.Execution{ExecuteResult: runner.ExecuteResult{ExecutionCount: 1, Status: runner.StatusError, Reason: runner.ReasonError}}, nil
		}
		return kernels.Execution{ExecuteResult: runner.ExecuteResult{ExecutionCount: 2, Status: runner.StatusAborted,
			Reason: runner.ReasonTimeout, Exec: 10 * time.Second}}, nil
	}
	a := td.do("POST", "/execute", map[string]any{"code": "1/0"}, interp(sa))
	want := `{"type":"error","name":"ZeroDivisionError","value":"division by zero","traceback":"Traceback (most recent call last):\nZeroDivisionError: division by zero"}
{"execution_count":1,"type":"number_of_executions"}
{"type":"end_of_execution"}`
	if got := strings.Join(lines(a.body), "\n"); a.code != 200 || got != want {
		t.Fatalf("1/0: HTTP %d\n%s", a.code, got)
	}
	a = td.do("POST", "/execute", map[string]any{"code": "while True: pass"}, interp(sa))
	want = `{"type":"error","name":"TimeoutError","value":"the cell was stopped at its time limit (after 10s)","traceback":""}
{"execution_count":2,"type":"number_of_executions"}
{"type":"end_of_execution"}`
	if got := strings.Join(lines(a.body), "\n"); a.code != 200 || got != want {
		t.Fatalf("timeout: HTTP %d\n%s", a.code, got)
	}
}

// A cell whose kernel had to be killed ends with one error naming the
// restart, or the loss when no fresh kernel could be had.
func TestExecuteKernelRestarted(t *testing.T) {
	td := newTestDoor(t, Config{})
	sa := td.create("alice", nil)
	why := "the cell did not stop when interrupted at its timeout, so its kernel was killed"
	for _, tc := range []struct {
		restarted bool
		want      string
	}{
		{true, `{"type":"error","name":"KernelRestarted","value":"Kernel was restarted: ` + why + `; the context's variables, imports and files are gone","traceback":""}`},
		{false, `{"type":"error","name":"KernelLost","value":"Kernel was lost: ` + why + `; create a new sandbox","traceback":""}`},
	} {
		td.core.ExecuteFunc = func(id, code string, events func(runner.Event)) (kernels.Execution, error) {
			return kernels.Execution{ExecuteResult: runner.ExecuteResult{ExecutionCount: 2, Status: runner.StatusAborted,
				Reason: runner.ReasonTimeout, Lost: true}, StateLost: true, LostReason: why, Restarted: tc.restarted}, nil
		}
		a := td.do("POST", "/execute", map[string]any{"code": "import re; re.match(r'(a+)+$', 'a'*40+'b')"}, interp(sa))
		want := tc.want + `
{"execution_count":2,"type":"number_of_executions"}
{"type":"end_of_execution"}`
		if got := strings.Join(lines(a.body), "\n"); a.code != 200 || got != want {
			t.Errorf("restarted %v: HTTP %d\n%s\nwant\n%s", tc.restarted, a.code, got, want)
		}
	}
}

func TestExecuteContexts(t *testing.T) {
	td := newTestDoor(t, Config{})
	sa := td.create("alice", nil)
	ran := map[string]string{}
	td.core.ExecuteFunc = func(id, code string, events func(runner.Event)) (kernels.Execution, error) {
		ran[code] = id + "/" + td.core.sessions[id].language
		return kernels.Execution{ExecuteResult: runner.ExecuteResult{ExecutionCount: 1, Status: runner.StatusOK}}, nil
	}
	for _, tc := range []struct {
		body map[string]any
		code int
	}{
		{map[string]any{"code": "main"}, 200},
		{map[string]any{"code": "js1", "language": "js"}, 200},
		{map[string]any{"code": "js2", "language": "javascript"}, 200},
		{map[string]any{"code": "py", "language": "python"}, 200},
		{map[string]any{"code": "byid", "context_id": "s02"}, 200},
	} {
		if a := td.do("POST", "/execute", tc.body, interp(sa)); a.code != tc.code {
			t.Fatalf("%v: HTTP %d %s", tc.body, a.code, a.body)
		}
	}
	want := map[string]string{"main": "s01/python", "js1": "s02/node", "js2": "s02/node", "py": "s01/python", "byid": "s02/node"}
	for k, v := range want {
		if ran[k] != v {
			t.Fatalf("cells ran in %v, want %v", ran, want)
		}
	}
	for _, tc := range []struct {
		body map[string]any
		code int
		msg  string
	}{
		{map[string]any{"code": "x", "language": "r"}, 400, `{"code":400,"message":"language \"r\" is not served: Paddock runs python and javascript contexts"}`},
		{map[string]any{"code": "x", "context_id": "s09"}, 404, `{"code":404,"message":"context s09 not found"}`},
		{map[string]any{"code": "x", "context_id": "s01", "language": "python"}, 400, `{"code":400,"message":"give context_id or language, not both"}`},
	} {
		if a := td.do("POST", "/execute", tc.body, interp(sa)); a.code != tc.code || string(a.body) != tc.msg {
			t.Fatalf("%v: HTTP %d %s", tc.body, a.code, a.body)
		}
	}
}

func TestContextLifecycle(t *testing.T) {
	td := newTestDoor(t, Config{})
	sa := td.create("alice", nil)
	for _, tc := range []struct {
		method, path string
		body         any
		code         int
		want         string
	}{
		{"POST", "/contexts", map[string]any{"language": "python", "cwd": "/home/user"}, 200, `{"id":"s02","language":"python","cwd":"/home/user"}`},
		{"POST", "/contexts", map[string]any{"language": "ts"}, 400, `{"code":400,"message":"language \"ts\" is not served: Paddock runs python and javascript contexts"}`},
		{"POST", "/contexts", map[string]any{"cwd": "/tmp"}, 400, `{"code":400,"message":"cwd: a context runs in /home/user (the session's /workspace); no other directory is served"}`},
		{"GET", "/contexts", nil, 200, `[{"id":"s01","language":"python","cwd":"/home/user"},{"id":"s02","language":"python","cwd":"/home/user"}]`},
		{"POST", "/contexts/s02/restart", nil, 204, ""},
		{"POST", "/contexts/s09/restart", nil, 404, `{"code":404,"message":"context s09 not found"}`},
		{"DELETE", "/contexts/s01", nil, 400, `{"code":400,"message":"context s01 is the sandbox's main context: kill the sandbox to end it"}`},
		{"DELETE", "/contexts/s02", nil, 204, ""},
		{"DELETE", "/contexts/s02", nil, 404, `{"code":404,"message":"context s02 not found"}`},
		{"GET", "/contexts", nil, 200, `[{"id":"s01","language":"python","cwd":"/home/user"}]`},
	} {
		a := td.do(tc.method, tc.path, tc.body, interp(sa))
		if a.code != tc.code || string(a.body) != tc.want {
			t.Fatalf("%s %s: HTTP %d %s, want %d %s", tc.method, tc.path, a.code, a.body, tc.code, tc.want)
		}
	}
	if ids := td.core.live(); strings.Join(ids, ",") != "s01" {
		t.Fatalf("sessions %v, want s01", ids)
	}
}

func TestContextsAreBounded(t *testing.T) {
	td := newTestDoor(t, Config{})
	sa := td.create("alice", nil)
	for i := 1; i < maxContexts; i++ {
		if a := td.do("POST", "/contexts", map[string]any{}, interp(sa)); a.code != 200 {
			t.Fatalf("context %d: HTTP %d %s", i, a.code, a.body)
		}
	}
	a := td.do("POST", "/contexts", map[string]any{}, interp(sa))
	if a.code != 429 || string(a.body) != `{"code":429,"message":"a sandbox has at most 16 contexts: delete one first"}` {
		t.Fatalf("HTTP %d %s", a.code, a.body)
	}
}
