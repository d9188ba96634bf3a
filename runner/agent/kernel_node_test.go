package agent

import (
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/runner/wire"
)

func TestNodeKernelCells(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		steps []step
	}{
		{
			name: "declarations survive",
			steps: []step{
				{code: "const a = 2", wantCount: 1, wantStatus: "ok", wantReason: "ok"},
				{code: "a * 21", wantEvents: []wire.Event{execResult(2, map[string]any{"text/plain": "42"})}, wantCount: 2, wantStatus: "ok", wantReason: "ok"},
				{code: "let n = 1; function inc() { return ++n }; class K { get v() { return n } }", wantCount: 3, wantStatus: "ok", wantReason: "ok"},
				{code: "inc(); new K().v", wantEvents: []wire.Event{execResult(4, map[string]any{"text/plain": "2"})}, wantCount: 4, wantStatus: "ok", wantReason: "ok"},
				{code: "n = 10; n", wantEvents: []wire.Event{execResult(5, map[string]any{"text/plain": "10"})}, wantCount: 5, wantStatus: "ok", wantReason: "ok"},
			},
		},
		{
			name: "top-level await",
			steps: []step{
				{code: "await new Promise(r => setTimeout(() => r(7), 10))", wantEvents: []wire.Event{execResult(1, map[string]any{"text/plain": "7"})}, wantCount: 1, wantStatus: "ok", wantReason: "ok"},
				{code: "const v = await Promise.resolve('later')", wantCount: 2, wantStatus: "ok", wantReason: "ok"},
				{code: "v", wantEvents: []wire.Event{execResult(3, map[string]any{"text/plain": "'later'"})}, wantCount: 3, wantStatus: "ok", wantReason: "ok"},
			},
		},
		{
			name: "values as the inspector shows them",
			steps: []step{
				{code: "({a: [1, 'x'], b: {c: null}})", wantEvents: []wire.Event{execResult(1, map[string]any{"text/plain": "{ a: [ 1, 'x' ], b: { c: null } }"})}, wantCount: 1, wantStatus: "ok", wantReason: "ok"},
				{code: "{ a: 1 }", wantEvents: []wire.Event{execResult(2, map[string]any{"text/plain": "{ a: 1 }"})}, wantCount: 2, wantStatus: "ok", wantReason: "ok"},
				{code: "undefined", wantCount: 3, wantStatus: "ok", wantReason: "ok"},
				{code: "new Map([[1, 2]])", wantEvents: []wire.Event{execResult(4, map[string]any{"text/plain": "Map(1) { 1 => 2 }"})}, wantCount: 4, wantStatus: "ok", wantReason: "ok"},
			},
		},
		{
			name: "console in order",
			steps: []step{
				{
					code: "console.log('a', 1); console.error('b'); process.stdout.write('c'); process.stdout.write(Buffer.from('d\\n')); 'e'",
					wantEvents: []wire.Event{
						stream("stdout", "a 1\n"),
						stream("stderr", "b\n"),
						stream("stdout", "c"),
						stream("stdout", "d\n"),
						execResult(1, map[string]any{"text/plain": "'e'"}),
					},
					wantCount: 1, wantStatus: "ok", wantReason: "ok",
				},
			},
		},
		{
			name: "require, environment and child processes",
			steps: []step{
				{code: "require('fs').writeFileSync('m.js', 'exports.x = 5')", wantCount: 1, wantStatus: "ok", wantReason: "ok"},
				{code: "require('./m.js').x + Number(process.env.N)", env: map[string]string{"N": "37"}, wantEvents: []wire.Event{execResult(2, map[string]any{"text/plain": "42"})}, wantCount: 2, wantStatus: "ok", wantReason: "ok"},
				{code: "require('child_process').execSync('echo hi', {stdio: 'inherit'}); typeof __filename", wantEvents: []wire.Event{execResult(3, map[string]any{"text/plain": "'undefined'"})}, wantStdout: "hi\n", wantCount: 3, wantStatus: "ok", wantReason: "ok"},
				{code: "process.argv.length + process.execArgv.length", wantEvents: []wire.Event{execResult(4, map[string]any{"text/plain": "1"})}, wantCount: 4, wantStatus: "ok", wantReason: "ok"},
			},
		},
		{
			name: "display",
			steps: []step{
				{code: "display.html('<b>x</b>'); console.log('after'); display({a: 1})", wantEvents: []wire.Event{
					displayed(map[string]any{"text/html": "<b>x</b>"}),
					stream("stdout", "after\n"),
					displayed(map[string]any{"text/plain": "{ a: 1 }"}),
				}, wantCount: 1, wantStatus: "ok", wantReason: "ok"},
				{code: "display({'text/html': '<i>y</i>', 'text/plain': 'y'}, {raw: true}); display.png(Buffer.from('PNG')); display.json([1])", wantEvents: []wire.Event{
					displayed(map[string]any{"text/html": "<i>y</i>", "text/plain": "y"}),
					displayed(map[string]any{"image/png": "UE5H"}),
					displayed(map[string]any{"application/json": []any{float64(1)}, "text/plain": "[ 1 ]"}),
				}, wantCount: 2, wantStatus: "ok", wantReason: "ok"},
				{code: "display({[Symbol.for('Jupyter.display')]() { return {'text/markdown': '# t'} }})", wantEvents: []wire.Event{
					displayed(map[string]any{"text/markdown": "# t"}),
				}, wantCount: 3, wantStatus: "ok", wantReason: "ok"},
			},
		},
		{
			name: "uncaught errors of callbacks do not end the kernel",
			steps: []step{
				{code: "setTimeout(() => { throw 'late' }, 1); await new Promise(r => setTimeout(r, 50)); 'alive'", wantEvents: []wire.Event{
					stream("stderr", "Uncaught 'late'\n"),
					execResult(1, map[string]any{"text/plain": "'alive'"}),
				}, wantCount: 1, wantStatus: "ok", wantReason: "ok"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k := startKernel(t, testConfig(t, LanguageNode), nil)
			runSteps(t, k, tt.steps)
		})
	}
}

func TestNodeKernelErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		setup     string
		code      string
		wantName  string
		wantValue string
		wantLines []string // the traceback starts with these
	}{
		{
			name:      "thrown",
			setup:     "function f() { throw new TypeError('boom') }",
			code:      "f()",
			wantName:  "TypeError",
			wantValue: "boom",
			wantLines: []string{"[cell-1]:1", "function f() { throw new TypeError('boom') }", "               ^", "", "TypeError: boom", "    at f ([cell-1]:1:22)", "    at [cell-2]:1:1"},
		},
		{
			name:      "const redeclared",
			setup:     "const a = 1",
			code:      "const a = 2",
			wantName:  "SyntaxError",
			wantValue: "Identifier 'a' has already been declared",
			wantLines: []string{"[cell-2]:1", "const a = 2", "^", "", "SyntaxError: Identifier 'a' has already been declared"},
		},
		{
			name:      "syntax error",
			code:      "syntax(",
			wantName:  "SyntaxError",
			wantValue: "Unexpected end of input",
			wantLines: []string{"[cell-1]:1", "syntax(", "       ", "", "SyntaxError: Unexpected end of input"},
		},
		{
			name:      "rejected await",
			code:      "await Promise.reject(new RangeError('r'))",
			wantName:  "RangeError",
			wantValue: "r",
			// Columns of the first line count the REPL's await wrapper.
			wantLines: []string{"RangeError: r", "    at [cell-1]:1:54"},
		},
		{
			name:      "a raw bundle that is not one",
			code:      "display({html: 1}, {raw: true})",
			wantName:  "TypeError",
			wantValue: `display: "html" is not a MIME type`,
			wantLines: []string{`TypeError: display: "html" is not a MIME type`, "    at [cell-1]:1:1"},
		},
		{
			name:      "not an error",
			code:      "throw {x: 1}",
			wantName:  "Uncaught",
			wantValue: "{ x: 1 }",
			wantLines: []string{"Uncaught { x: 1 }"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k := startKernel(t, testConfig(t, LanguageNode), nil)
			if tt.setup != "" {
				k.execute(wire.Execute{Code: tt.setup}).mustDone(t, "ok", "ok")
			}
			res := k.execute(wire.Execute{Code: tt.code})
			res.mustDone(t, "error", "error")
			e := res.errorEvent(t)
			if e.Name != tt.wantName || e.Value != tt.wantValue {
				t.Errorf("error %q %q, want %q %q", e.Name, e.Value, tt.wantName, tt.wantValue)
			}
			if len(e.Traceback) < len(tt.wantLines) || strings.Join(e.Traceback[:len(tt.wantLines)], "\n") != strings.Join(tt.wantLines, "\n") {
				t.Errorf("traceback\n%s\nwant it to start with\n%s", strings.Join(e.Traceback, "\n"), strings.Join(tt.wantLines, "\n"))
			}
			for _, line := range e.Traceback {
				if strings.Contains(line, "paddock") || strings.Contains(line, "node:vm") {
					t.Errorf("traceback shows the kernel: %q", line)
				}
			}
		})
	}
}

func TestNodeKernelStreams(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, LanguageNode)
	k := startKernel(t, cfg, nil)
	// The cell prints a line, then blocks node's only thread (no await)
	// until a file the test creates only once the line has come: the line
	// was sent at once, not left to the event loop.
	req := wire.Execute{Code: "const fs = require('fs'), pause = new Int32Array(new SharedArrayBuffer(4));\n" +
		"console.log('first');\nwhile (!fs.existsSync('go')) Atomics.wait(pause, 0, 0, 10);\nconsole.log('second')"}
	start := k.startCell(&req)
	k.waitStdout(req.ID, "first\n")
	touch(t, cfg.Workdir, "go")
	res := k.collect(req.ID, start)
	res.mustDone(t, "ok", "ok")
	if got := res.text("stdout"); got != "second\n" {
		t.Errorf("stdout after the release %q, want %q", got, "second\n")
	}
}
