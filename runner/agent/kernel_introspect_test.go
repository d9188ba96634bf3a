package agent

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/runner/wire"
)

// ask sends the question q and returns the interpreter's answer.
func (k *kernelClient) ask(q wire.Introspect) wire.Answer {
	k.t.Helper()
	q.ID = k.nextID()
	a := k.call(wire.TypeIntrospect, q.ID, q)
	if a.Error != "" || a.Answer == nil {
		k.t.Fatalf("%s %q at %d: ack %+v; log:\n%s", q.Op, q.Code, q.CursorPos, a, k.log)
	}
	return *a.Answer
}

// untilInput reads cell id's frames until its input request, and returns
// it with the events before it.
func (k *kernelClient) untilInput(id uint64) (wire.InputRequest, []wire.Event) {
	k.t.Helper()
	var events []wire.Event
	for {
		f := k.frame()
		switch f.Type {
		case wire.TypeInputRequest:
			var r wire.InputRequest
			k.decode(f, &r)
			if r.ID != id {
				k.t.Fatalf("input request %+v during cell %d", r, id)
			}
			return r, events
		case wire.TypeEvent:
			var ev wire.Event
			k.decode(f, &ev)
			events = append(events, ev)
		case wire.TypeDone:
			k.t.Fatalf("cell over (%s) before it asked for input; events %+v", f.Payload, events)
		default:
			k.stash(f)
		}
	}
}

func TestKernelComplete(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		language string
		setup    string
		code     string
		pos      int // -1: the code's length in code points
		want     []string
		exact    bool // want is every match, else some of them
		start    int
	}{
		{name: "python module after import", language: LanguagePython, code: "import o", pos: -1, want: []string{"os", "operator"}, start: 7},
		{name: "python submodule", language: LanguagePython, code: "import os.pa", pos: -1, want: []string{"os.path"}, exact: true, start: 7},
		{name: "python from import", language: LanguagePython, code: "from os import getcw", pos: -1, want: []string{"getcwd", "getcwdb"}, exact: true, start: 15},
		{name: "python namespace", language: LanguagePython, setup: "x_value = 41\nx_other = 1", code: "x_v", pos: -1, want: []string{"x_value"}, exact: true, start: 0},
		{name: "python attribute", language: LanguagePython, setup: "import os", code: "os.pa", pos: -1, want: []string{"pardir", "path", "pathconf", "pathconf_names", "pathsep"}, exact: true, start: 3},
		{name: "python builtin and keyword", language: LanguagePython, code: "pri", pos: -1, want: []string{"print"}, exact: true, start: 0},
		{name: "python code points", language: LanguagePython, setup: "x_value = 1", code: "s = 'é😀'; x_v", pos: -1, want: []string{"x_value"}, exact: true, start: 10},
		{name: "python cursor inside", language: LanguagePython, setup: "x_value = 1", code: "x_v + 1", pos: 3, want: []string{"x_value"}, exact: true, start: 0},
		{name: "python nothing", language: LanguagePython, code: "zzz_no", pos: -1, want: []string{}, exact: true, start: 0},
		{name: "node lexical", language: LanguageNode, setup: "const alpha = 1; let alpine = 2", code: "alp", pos: -1, want: []string{"alpha", "alpine"}, exact: true, start: 0},
		{name: "node global", language: LanguageNode, setup: "globalThis.betaVal = 2", code: "betaV", pos: -1, want: []string{"betaVal"}, exact: true, start: 0},
		{name: "node member", language: LanguageNode, code: "Math.fl", pos: -1, want: []string{"floor"}, exact: true, start: 5},
		{name: "node prototype", language: LanguageNode, setup: "const s = 'abc'", code: "s.toUpp", pos: -1, want: []string{"toUpperCase"}, exact: true, start: 2},
		{name: "node code points", language: LanguageNode, setup: "const alpha = 1", code: "'😀é'; alp", pos: -1, want: []string{"alpha"}, exact: true, start: 6},
		{name: "node keyword", language: LanguageNode, code: "awai", pos: -1, want: []string{"await"}, exact: true, start: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k := startKernel(t, testConfig(t, tt.language), nil)
			if tt.setup != "" {
				k.execute(wire.Execute{Code: tt.setup}).mustDone(t, "ok", "ok")
			}
			pos := tt.pos
			if pos < 0 {
				pos = len([]rune(tt.code))
			}
			a := k.ask(wire.Introspect{Op: wire.OpComplete, Code: tt.code, CursorPos: pos})
			if a.CursorStart != tt.start || a.CursorEnd != pos {
				t.Errorf("cursor %d..%d, want %d..%d", a.CursorStart, a.CursorEnd, tt.start, pos)
			}
			if tt.exact {
				if !reflect.DeepEqual(a.Matches, tt.want) && !(len(a.Matches) == 0 && len(tt.want) == 0) {
					t.Errorf("matches %q, want %q", a.Matches, tt.want)
				}
				return
			}
			for _, w := range tt.want {
				if !slices.Contains(a.Matches, w) {
					t.Errorf("matches %q lack %q", a.Matches, w)
				}
			}
		})
	}
}

func TestKernelInspect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		language string
		setup    string
		code     string
		pos      int
		level    int
		want     string // the text/plain, "" for not found
	}{
		{name: "python function", language: LanguagePython, setup: "def add(a, b=2):\n    \"Add things.\"\n    return a + b", code: "add(1, ", pos: 7,
			want: "Signature: add(a, b=2)\nDocstring: Add things.\nFile: <cell-1>\nType: function"},
		{name: "python source", language: LanguagePython, setup: "def add(a, b=2):\n    \"Add things.\"\n    return a + b", code: "add", pos: 1, level: 1,
			want: "Signature: add(a, b=2)\nDocstring: Add things.\nSource:\ndef add(a, b=2):\n    \"Add things.\"\n    return a + b\nFile: <cell-1>\nType: function"},
		{name: "python value", language: LanguagePython, setup: "n = 42", code: "n", pos: 1, want: "String form: 42\nDocstring:\n" + pythonIntDoc + "\nType: int"},
		{name: "python attribute", language: LanguagePython, setup: "import os", code: "os.getcwd", pos: 9, want: "Signature: os.getcwd()\nDocstring: Return a unicode string representing the current working directory.\nType: builtin_function_or_method"},
		{name: "python not found", language: LanguagePython, code: "nothing_here", pos: 3},
		{name: "node function", language: LanguageNode, setup: "function add(a, b) { return a + b }", code: "add(1, ", pos: 7, want: "Type: function\nSignature: function add(a, b)"},
		{name: "node source", language: LanguageNode, setup: "function add(a, b) { return a + b }", code: "add", pos: 3, level: 1, want: "Type: function\nSignature: function add(a, b)\nSource:\nfunction add(a, b) { return a + b }"},
		{name: "node value", language: LanguageNode, setup: "const o = { a: [1, 2] }", code: "o", pos: 1, want: "Type: Object\nValue: { a: [ 1, 2 ] }"},
		{name: "node member", language: LanguageNode, setup: "const o = { a: [1, 2] }", code: "o.a", pos: 3, want: "Type: Array\nValue: [ 1, 2 ]"},
		{name: "node not found", language: LanguageNode, code: "nothingHere", pos: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k := startKernel(t, testConfig(t, tt.language), nil)
			if tt.setup != "" {
				k.execute(wire.Execute{Code: tt.setup}).mustDone(t, "ok", "ok")
			}
			a := k.ask(wire.Introspect{Op: wire.OpInspect, Code: tt.code, CursorPos: tt.pos, DetailLevel: tt.level})
			if tt.want == "" {
				if a.Found {
					t.Errorf("found %+v, want nothing", a)
				}
				return
			}
			if !a.Found || a.Data["text/plain"] != tt.want {
				t.Errorf("found %v, text\n%v\nwant\n%s", a.Found, a.Data["text/plain"], tt.want)
			}
		})
	}
}

// pythonIntDoc is int's docstring in the template's Python (3.11).
const pythonIntDoc = `int([x]) -> integer
int(x, base=10) -> integer

Convert a number or string to an integer, or return 0 if no arguments
are given.  If x is a number, return x.__int__().  For floating point
numbers, this truncates towards zero.

If x is not a number or if base is given, then x must be a string,
bytes, or bytearray instance representing an integer literal in the
given base.  The literal can be preceded by '+' or '-' and be surrounded
by whitespace.  The base defaults to 10.  Valid bases are 0 and 2-36.
Base 0 means to interpret the base from the string as an integer literal.
>>> int('0b100', base=0)
4`

func TestKernelIsComplete(t *testing.T) {
	t.Parallel()
	tests := []struct {
		language string
		cases    map[string]wire.Answer
	}{
		{language: LanguagePython, cases: map[string]wire.Answer{
			"x = 1":                    {Status: "complete"},
			"a = 1\nb = 2":             {Status: "complete"},
			"if x:":                    {Status: "incomplete", Indent: "    "},
			"for i in x:\n    y = i":   {Status: "incomplete", Indent: "    "},
			"for i in x:\n    y = i\n": {Status: "complete"},
			"x = (1,":                  {Status: "incomplete"},
			"x = 1 + \\":               {Status: "incomplete"},
			"def f(:":                  {Status: "invalid"},
			"await asyncio.sleep(0)":   {Status: "complete"},
			"":                         {Status: "complete"},
		}},
		{language: LanguageNode, cases: map[string]wire.Answer{
			"let x = 1":               {Status: "complete"},
			"function f() {":          {Status: "incomplete", Indent: "  "},
			"f(1,\n  2,":              {Status: "incomplete", Indent: "  "},
			"`abc":                    {Status: "incomplete"},
			"let = ;":                 {Status: "invalid"},
			"await Promise.resolve()": {Status: "complete"},
			"'abc":                    {Status: "invalid"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.language, func(t *testing.T) {
			t.Parallel()
			k := startKernel(t, testConfig(t, tt.language), nil)
			for code, want := range tt.cases {
				if got := k.ask(wire.Introspect{Op: wire.OpIsComplete, Code: code}); !reflect.DeepEqual(got, want) {
					t.Errorf("%q: %+v, want %+v", code, got, want)
				}
			}
		})
	}
}

// TestKernelAskDuringCell: Python answers while a cell runs.
func TestKernelAskDuringCell(t *testing.T) {
	t.Parallel()
	k := startKernel(t, testConfig(t, LanguagePython), nil)
	k.execute(wire.Execute{Code: "x_value = 1"}).mustDone(t, "ok", "ok")
	req := wire.Execute{Code: "print('looping', flush=True)\nwhile True: pass"}
	start := k.startCell(&req)
	k.waitStdout(req.ID, "looping\n")
	a := k.ask(wire.Introspect{Op: wire.OpComplete, Code: "x_v", CursorPos: 3})
	if !reflect.DeepEqual(a.Matches, []string{"x_value"}) {
		t.Errorf("matches %q during the cell", a.Matches)
	}
	k.simple(wire.TypeInterrupt)
	k.collect(req.ID, start).mustDone(t, "aborted", "interrupted")
}

func TestKernelInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		language string
		code     string
		want     wire.InputRequest
		reply    wire.InputReply
		events   []wire.Event // after the input request
		status   string
	}{
		{name: "python input", language: LanguagePython, code: "print('before')\nname = input('Name? ')\nprint('hi', name)",
			want: wire.InputRequest{Prompt: "Name? "}, reply: wire.InputReply{Value: "Ada Lovelace"},
			events: []wire.Event{stream("stdout", "hi Ada Lovelace\n")}, status: "ok"},
		{name: "python getpass", language: LanguagePython, code: "import getpass\ngetpass.getpass('pw: ')",
			want: wire.InputRequest{Prompt: "pw: ", Password: true}, reply: wire.InputReply{Value: "s3cret"},
			events: []wire.Event{execResult(1, map[string]any{"text/plain": "'s3cret'"})}, status: "ok"},
		{name: "python error reply", language: LanguagePython, code: "try:\n    input('x')\nexcept EOFError as e:\n    print('eof:', e)",
			want: wire.InputRequest{Prompt: "x"}, reply: wire.InputReply{Error: "the client went away"},
			events: []wire.Event{stream("stdout", "eof: the client went away\n")}, status: "ok"},
		{name: "python too long", language: LanguagePython, code: "try:\n    input('x')\nexcept EOFError as e:\n    print('eof:', e)",
			want: wire.InputRequest{Prompt: "x"}, reply: wire.InputReply{Value: strings.Repeat("v", wire.MaxInput+1)},
			events: []wire.Event{stream("stdout", "eof: an input of 1048577 bytes is over the limit of 1048576\n")}, status: "ok"},
		{name: "node input", language: LanguageNode, code: "console.log('before'); const name = await input('Name? '); console.log('hi', name)",
			want: wire.InputRequest{Prompt: "Name? "}, reply: wire.InputReply{Value: "Ada"},
			events: []wire.Event{stream("stdout", "hi Ada\n")}, status: "ok"},
		{name: "node password", language: LanguageNode, code: "await input('pw: ', { password: true })",
			want: wire.InputRequest{Prompt: "pw: ", Password: true}, reply: wire.InputReply{Value: "s3cret"},
			events: []wire.Event{execResult(1, map[string]any{"text/plain": "'s3cret'"})}, status: "ok"},
		{name: "node error reply", language: LanguageNode, code: "try { await input('x') } catch (e) { console.log(e.name, e.message) }",
			want: wire.InputRequest{Prompt: "x"}, reply: wire.InputReply{Error: "the client went away"},
			events: []wire.Event{stream("stdout", "EOFError the client went away\n")}, status: "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k := startKernel(t, testConfig(t, tt.language), nil)
			req := wire.Execute{Code: tt.code, Stdin: true}
			start := k.startCell(&req)
			got, _ := k.untilInput(req.ID)
			tt.want.ID = req.ID
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("input request %+v, want %+v", got, tt.want)
			}
			tt.reply.ID = req.ID
			k.send(wire.TypeInputReply, tt.reply)
			res := k.collect(req.ID, start)
			for i := range tt.events {
				tt.events[i].ID = req.ID
			}
			if !reflect.DeepEqual(res.events, tt.events) || res.done.Status != tt.status {
				t.Errorf("events %+v, done %+v; want %+v, %s", res.events, res.done, tt.events, tt.status)
			}
		})
	}
}

func TestKernelInputRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		language string
		code     string
		want     wire.ExecError
	}{
		{language: LanguagePython, code: "input('x')", want: wire.ExecError{Name: "StdinNotImplementedError", Value: stdinRefused}},
		{language: LanguageNode, code: "await input('x')", want: wire.ExecError{Name: "StdinNotImplementedError", Value: stdinRefused}},
	}
	for _, tt := range tests {
		t.Run(tt.language, func(t *testing.T) {
			t.Parallel()
			k := startKernel(t, testConfig(t, tt.language), nil)
			res := k.execute(wire.Execute{Code: tt.code})
			res.mustDone(t, "error", "error")
			if e := res.errorEvent(t); e.Name != tt.want.Name || e.Value != tt.want.Value {
				t.Errorf("error %+v, want %+v", e, tt.want)
			}
		})
	}
}

// TestKernelInputInterrupt: a cell waiting for input stops at an interrupt
// and at its timeout; a late reply is dropped and the kernel goes on.
func TestKernelInputInterrupt(t *testing.T) {
	t.Parallel()
	for _, lang := range []string{LanguagePython, LanguageNode} {
		for _, how := range []string{"interrupt", "timeout"} {
			t.Run(lang+" "+how, func(t *testing.T) {
				t.Parallel()
				k := startKernel(t, testConfig(t, lang), nil)
				code := "x = input('wait')"
				if lang == LanguageNode {
					code = "const x = await input('wait')"
				}
				req := wire.Execute{Code: code, Stdin: true}
				if how == "timeout" {
					req.TimeoutMS = 500
				}
				start := k.startCell(&req)
				k.untilInput(req.ID)
				if how == "interrupt" {
					k.send(wire.TypeInterrupt, wire.Request{ID: k.nextID()})
				}
				want := "interrupted"
				if how == "timeout" {
					want = "timeout"
				}
				k.collect(req.ID, start).mustDone(t, "aborted", want)
				k.send(wire.TypeInputReply, wire.InputReply{ID: req.ID, Value: "late"})
				if got := k.execute(wire.Execute{Code: "1 + 1"}).resultText(); got != "2" {
					t.Errorf("after the %s: %q, want 2", how, got)
				}
			})
		}
	}
}

func TestKernelDisplayUpdates(t *testing.T) {
	t.Parallel()
	k := startKernel(t, testConfig(t, LanguagePython), nil)
	res := k.execute(wire.Execute{Code: "from IPython.display import display, update_display, clear_output\n" +
		"h = display('a', display_id=True)\nh.update('b')\nupdate_display('c', display_id=h.display_id)\n" +
		"display('d', display_id='mine')\nclear_output(wait=True)\nclear_output()"})
	res.mustDone(t, "ok", "ok")
	if len(res.events) != 6 {
		t.Fatalf("events %+v, want 6", res.events)
	}
	id, _ := res.events[0].Transient["display_id"].(string)
	if len(id) != 32 {
		t.Fatalf("display id %q, want 32 hex digits", id)
	}
	tr := func(id string) map[string]any { return map[string]any{"display_id": id} }
	want := []wire.Event{
		{ID: res.done.ID, Type: "display_data", Data: map[string]any{"text/plain": "'a'"}, Metadata: map[string]any{}, Transient: tr(id)},
		{ID: res.done.ID, Type: "update_display_data", Data: map[string]any{"text/plain": "'b'"}, Metadata: map[string]any{}, Transient: tr(id)},
		{ID: res.done.ID, Type: "update_display_data", Data: map[string]any{"text/plain": "'c'"}, Metadata: map[string]any{}, Transient: tr(id)},
		{ID: res.done.ID, Type: "display_data", Data: map[string]any{"text/plain": "'d'"}, Metadata: map[string]any{}, Transient: tr("mine")},
		{ID: res.done.ID, Type: "clear_output", Wait: true},
		{ID: res.done.ID, Type: "clear_output"},
	}
	got, _ := json.Marshal(res.events)
	wantJSON, _ := json.Marshal(want)
	if string(got) != string(wantJSON) {
		t.Errorf("events\n%s\nwant\n%s", got, wantJSON)
	}
}

// TestKernelForgedInputAndAnswers: input requests and answers the cell's
// code writes on the report channel lack the keys of the cell and of the
// question: the host never sees them.
func TestKernelForgedInputAndAnswers(t *testing.T) {
	t.Parallel()
	k := startKernel(t, testConfig(t, LanguagePython), nil)
	k.execute(wire.Execute{Code: "x_value = 1"}).mustDone(t, "ok", "ok")
	req := wire.Execute{Stdin: true, Code: forgePython + `import os, time
forge(op='input', seq=2, prompt='forged')
print('forging', flush=True)
while not os.path.exists('stop'):
    for r in range(1, 4):
        forge(op='answer', rid=r, answer={'matches': ['forged']})
    time.sleep(0.001)
print('got', input('real'))`}
	start := k.startCell(&req)
	k.waitStdout(req.ID, "forging\n")
	for range 3 {
		if a := k.ask(wire.Introspect{Op: wire.OpComplete, Code: "x_v", CursorPos: 3}); !reflect.DeepEqual(a.Matches, []string{"x_value"}) {
			t.Errorf("matches %q while the cell forges answers", a.Matches)
		}
	}
	// The cell may see the file and ask for input before the write's Ack
	// goes out: either frame may come first.
	id := k.nextID()
	k.send(wire.TypeFileWrite, wire.FileWrite{ID: id, Path: "stop"})
	got, _ := k.untilInput(req.ID)
	if a := k.waitAck(id); a.Error != "" {
		t.Fatalf("write: %+v", a)
	}
	if got.Prompt != "real" {
		t.Errorf("input request %+v, want the real one", got)
	}
	k.send(wire.TypeInputReply, wire.InputReply{ID: req.ID, Value: "v"})
	res := k.collect(req.ID, start)
	res.mustDone(t, "ok", "ok")
	if out := res.text("stdout"); out != "got v\n" {
		t.Errorf("stdout %q", out)
	}
}

// TestKernelCompleteNewModule: a module written after a first completion
// is offered by the next.
func TestKernelCompleteNewModule(t *testing.T) {
	t.Parallel()
	k := startKernel(t, testConfig(t, LanguagePython), nil)
	if a := k.ask(wire.Introspect{Op: wire.OpComplete, Code: "import mymod", CursorPos: 12}); len(a.Matches) != 0 {
		t.Fatalf("matches %q before the module exists", a.Matches)
	}
	id := k.nextID()
	if a := k.call(wire.TypeFileWrite, id, wire.FileWrite{ID: id, Path: "mymodule.py", Content: []byte("x = 1\n")}); a.Error != "" {
		t.Fatalf("write: %+v", a)
	}
	if a := k.ask(wire.Introspect{Op: wire.OpComplete, Code: "import mymod", CursorPos: 12}); !reflect.DeepEqual(a.Matches, []string{"mymodule"}) {
		t.Errorf("matches %q, want the new module", a.Matches)
	}
}

// TestKernelAskLimits: at most maxAsks questions wait for a busy
// interpreter; a prompt is cut at maxPrompt bytes.
func TestKernelAskLimits(t *testing.T) {
	t.Parallel()
	t.Run("questions", func(t *testing.T) {
		t.Parallel()
		k := startKernel(t, testConfig(t, LanguageNode), nil)
		req := wire.Execute{Code: "console.log('looping'); for (;;) {}"}
		start := k.startCell(&req)
		k.waitStdout(req.ID, "looping\n")
		first := k.lastID + 1
		for range maxAsks + 1 {
			id := k.nextID()
			k.send(wire.TypeIntrospect, wire.Introspect{ID: id, Op: wire.OpIsComplete, Code: "1"})
		}
		if a := k.waitAck(k.lastID); a.Error != "64 questions already wait for the interpreter" {
			t.Errorf("question %d: %+v", maxAsks+1, a)
		}
		k.send(wire.TypeInterrupt, wire.Request{ID: k.nextID()})
		k.collect(req.ID, start).mustDone(t, "aborted", "interrupted")
		for id := first; id < first+maxAsks; id++ {
			if a := k.waitAck(id); a.Error != "" || a.Answer == nil || a.Answer.Status != "complete" {
				t.Fatalf("question %d: %+v", id, a)
			}
		}
	})
	t.Run("prompt", func(t *testing.T) {
		t.Parallel()
		k := startKernel(t, testConfig(t, LanguagePython), nil)
		req := wire.Execute{Code: "input('é' * 40000)", Stdin: true}
		start := k.startCell(&req)
		got, _ := k.untilInput(req.ID)
		if got.Prompt != strings.Repeat("é", maxPrompt/2) {
			t.Errorf("prompt of %d bytes, want %d", len(got.Prompt), maxPrompt)
		}
		k.send(wire.TypeInputReply, wire.InputReply{ID: req.ID, Value: "v"})
		k.collect(req.ID, start).mustDone(t, "ok", "ok")
	})
}
