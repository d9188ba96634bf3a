package mcpdoor

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
)

func TestToolsListed(t *testing.T) {
	cs := connect(t, serve(t, &fakeCore{}, Options{}), "")
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	want := []string{"close_session", "create_session", "execute", "fork_session", "list_files", "pause_session", "read_file",
		"resume_session", "run_code", "write_file"}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
	for _, tl := range res.Tools {
		if tl.Name != "run_code" {
			continue
		}
		in, _ := json.Marshal(tl.InputSchema)
		for _, s := range []string{`"enum":["node","python"]`, `"enum":["node","python","python-slim"]`, `"required":["language","code"]`} {
			if !strings.Contains(string(in), s) {
				t.Errorf("run_code input schema %s lacks %s", in, s)
			}
		}
		if tl.OutputSchema == nil {
			t.Error("run_code has no output schema")
		}
		for _, s := range []string{"no network", "python: numpy 1.24.2, python 3.11.2", "512 MB memory", "/workspace", "10s default timeout",
			"With no template named, run_code code that imports numpy, pandas (already loaded here) and sessions in python get this one.",
			"- python (template python-slim): the same packages as template python.",
			"With no template named, other run_code code in python get this one."} {
			if !strings.Contains(tl.Description, s) {
				t.Errorf("run_code description lacks %q:\n%s", s, tl.Description)
			}
		}
	}
}

func TestRunCodeNamesATemplate(t *testing.T) {
	f := &fakeCore{run: func(c core.Caller, in core.RunInput) (core.RunResult, error) {
		if in.Language != "python" || in.Template != "python-slim" {
			t.Errorf("run input %+v, want language python, template python-slim", in)
		}
		return core.RunResult{Template: in.Template, Outcome: pool.Outcome{Result: runner.RunResult{Reason: runner.ReasonOK}}}, nil
	}}
	cs := connect(t, serve(t, f, Options{}), "")
	res := call(t, cs, "run_code", map[string]any{"language": "python", "template": "python-slim", "code": "print(1)"})
	if got, _ := json.Marshal(res.StructuredContent); res.IsError || !strings.Contains(string(got), `"template":"python-slim"`) {
		t.Fatalf("result %+v, structured %s", res, got)
	}
}

func TestRunCode(t *testing.T) {
	f := &fakeCore{run: func(c core.Caller, in core.RunInput) (core.RunResult, error) {
		if in.Language != "python" || in.Code != "print(42)" || in.Timeout != 2500*time.Millisecond ||
			len(in.Files) != 1 || string(in.Files[0].Content) != "aGk=" || in.Files[0].Encoding != "base64" {
			t.Errorf("run input %+v", in)
		}
		return core.RunResult{Template: "python", Outcome: pool.Outcome{Result: runner.RunResult{
			Stdout: []byte("42\n"), Reason: runner.ReasonOK, Exec: 3 * time.Millisecond}}}, nil
	}}
	cs := connect(t, serve(t, f, Options{}), "")
	res := call(t, cs, "run_code", map[string]any{"language": "python", "code": "print(42)", "timeout_ms": 2500,
		"files": []map[string]any{{"path": "a.txt", "content": "aGk=", "encoding": "base64"}}})
	if res.IsError || !slices.Equal(texts(res), []string{"42\n"}) {
		t.Fatalf("result %+v, texts %q", res, texts(res))
	}
	// The client decodes structuredContent into a map: keys come sorted.
	got, _ := json.Marshal(res.StructuredContent)
	want := `{"duration_ms":3,"exit_code":0,"reason":"ok","stderr":"","stdout":"42\n","template":"python"}`
	if string(got) != want {
		t.Fatalf("structured %s\nwant       %s", got, want)
	}
	if f.callers[0].Door != "mcp" {
		t.Errorf("caller %+v, want door mcp", f.callers[0])
	}
}

func TestRunCodeFailing(t *testing.T) {
	f := &fakeCore{run: func(core.Caller, core.RunInput) (core.RunResult, error) {
		return core.RunResult{Template: "python", Outcome: pool.Outcome{Result: runner.RunResult{
			Stderr: []byte("ZeroDivisionError: division by zero\n"), ExitCode: 1, Reason: runner.ReasonError}}}, nil
	}}
	cs := connect(t, serve(t, f, Options{}), "")
	res := call(t, cs, "run_code", map[string]any{"language": "python", "code": "1/0"})
	want := []string{"stderr:\nZeroDivisionError: division by zero\n", "exit code 1 (error)"}
	if !res.IsError || !slices.Equal(texts(res), want) {
		t.Fatalf("isError %v, texts %q, want %q", res.IsError, texts(res), want)
	}
}

func TestRunCodeCoreError(t *testing.T) {
	f := &fakeCore{run: func(core.Caller, core.RunInput) (core.RunResult, error) {
		return core.RunResult{}, &core.Error{Kind: core.KindTooMany, Code: "too_many_runs", Message: "tenant has 4 runs in flight"}
	}}
	cs := connect(t, serve(t, f, Options{}), "")
	res := call(t, cs, "run_code", map[string]any{"language": "python", "code": "1"})
	if want := []string{"too_many_runs: tenant has 4 runs in flight"}; !res.IsError || !slices.Equal(texts(res), want) {
		t.Fatalf("isError %v, texts %q, want %q", res.IsError, texts(res), want)
	}
}

// The pool's saturation reaches a model as a tool error naming the
// retry delay.
func TestRunCodeSaturated(t *testing.T) {
	f := &fakeCore{run: func(core.Caller, core.RunInput) (core.RunResult, error) {
		return core.RunResult{}, fmt.Errorf("running: %w", &pool.SaturatedError{Template: "python", Waited: 5 * time.Second, RetryAfter: 7 * time.Second})
	}}
	cs := connect(t, serve(t, f, Options{}), "")
	res := call(t, cs, "run_code", map[string]any{"language": "python", "code": "1"})
	want := []string{"saturated: the server is saturated: no sandbox was free within the queue deadline; retry after 7 s"}
	if !res.IsError || !slices.Equal(texts(res), want) {
		t.Fatalf("isError %v, texts %q, want %q", res.IsError, texts(res), want)
	}
}

// png is the PNG signature and a little more, as a cell's display would
// carry it (base64).
const pngB64 = "iVBORw0KGgoAAAANSUhEUg=="

func TestExecuteContent(t *testing.T) {
	f := &fakeCore{execute: func(id string, in core.ExecuteInput, events func(runner.Event)) (kernels.Execution, error) {
		if id != "s0" || in.Code != "plot()" {
			t.Errorf("execute %s %+v", id, in)
		}
		events(runner.Event{Type: runner.EventStream, Stream: runner.Stdout, Text: "a\n"})
		events(runner.Event{Type: runner.EventDisplayData, Data: map[string]any{"image/png": pngB64, "text/plain": "<Figure>"}})
		events(runner.Event{Type: runner.EventExecuteResult, Data: map[string]any{"text/plain": "42"}, ExecutionCount: 1})
		return kernels.Execution{ExecuteResult: runner.ExecuteResult{ExecutionCount: 1, Status: "ok", Reason: runner.ReasonOK}}, nil
	}}
	cs := connect(t, serve(t, f, Options{}), "")
	res := call(t, cs, "execute", map[string]any{"session_id": "s0", "code": "plot()"})
	if res.IsError || len(res.Content) != 3 {
		t.Fatalf("result %+v", res)
	}
	if got := texts(res); !slices.Equal(got, []string{"a\n", "42"}) {
		t.Errorf("texts %q", got)
	}
	img, ok := res.Content[1].(*mcp.ImageContent)
	if !ok || img.MIMEType != "image/png" || !strings.HasPrefix(string(img.Data), "\x89PNG\r\n\x1a\n") {
		t.Fatalf("second block %#v, want a PNG image", res.Content[1])
	}
	// The client decodes structuredContent into a map: keys come sorted.
	got, _ := json.Marshal(res.StructuredContent)
	want := `{"displays":[{"mime_types":["image/png","text/plain"],"text":"\u003cFigure\u003e"}],"duration_ms":0,"execution_count":1,"reason":"ok","result":"42","session_id":"s0","status":"ok","stderr":"","stdout":"a\n"}`
	if string(got) != want {
		t.Fatalf("structured %s\nwant       %s", got, want)
	}
}

// A cell whose kernel had to be killed says, in its text and its
// structured content, that the state is gone and the kernel restarted.
func TestExecuteStateLost(t *testing.T) {
	why := "the cell did not stop when interrupted at its timeout, so its kernel was killed"
	for _, restarted := range []bool{true, false} {
		f := &fakeCore{execute: func(string, core.ExecuteInput, func(runner.Event)) (kernels.Execution, error) {
			return kernels.Execution{ExecuteResult: runner.ExecuteResult{ExecutionCount: 2, Status: "aborted", Reason: runner.ReasonTimeout, Lost: true},
				StateLost: true, LostReason: why, Restarted: restarted}, nil
		}}
		cs := connect(t, serve(t, f, Options{}), "")
		res := call(t, cs, "execute", map[string]any{"session_id": "s0", "code": "import re; re.match(r'(a+)+$', 'a'*40+'b')"})
		next := "The kernel was restarted: the session goes on under the same session_id, but its variables, imports and the files in /workspace are gone; redo what later cells need."
		if !restarted {
			next = "The session is lost; close it and create a new one."
		}
		want := []string{"the cell was stopped: timeout", "The session's state was lost: " + why + ". " + next}
		if !res.IsError || !slices.Equal(texts(res), want) {
			t.Errorf("restarted %v: isError %v texts %q, want %q", restarted, res.IsError, texts(res), want)
		}
		got, _ := json.Marshal(res.StructuredContent)
		wantJSON := `"reason":"timeout","session_id":"s0","state_lost":true,"state_lost_reason":"` + why + `","status":"aborted"`
		if restarted {
			wantJSON = `"kernel_restarted":true,` + wantJSON
		}
		if !strings.Contains(string(got), wantJSON) {
			t.Errorf("restarted %v: structured %s, want %s", restarted, got, wantJSON)
		}
	}
}

func TestExecuteError(t *testing.T) {
	f := &fakeCore{execute: func(string, core.ExecuteInput, func(runner.Event)) (kernels.Execution, error) {
		e := &runner.ExecError{Name: "ZeroDivisionError", Value: "division by zero",
			Traceback: []string{"Traceback (most recent call last):", "  \x1b[0;32mFile \"<cell>\", line 1\x1b[0m", "ZeroDivisionError: division by zero"}}
		return kernels.Execution{ExecuteResult: runner.ExecuteResult{ExecutionCount: 2, Status: "error", Reason: runner.ReasonError, Error: e}}, nil
	}}
	cs := connect(t, serve(t, f, Options{}), "")
	res := call(t, cs, "execute", map[string]any{"session_id": "s0", "code": "1/0"})
	want := []string{"Traceback (most recent call last):\n  File \"<cell>\", line 1\nZeroDivisionError: division by zero"}
	if !res.IsError || !slices.Equal(texts(res), want) {
		t.Fatalf("isError %v texts %q, want %q", res.IsError, texts(res), want)
	}
}
