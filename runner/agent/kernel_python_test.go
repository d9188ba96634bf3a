package agent

import (
	"encoding/base64"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/runner/wire"
)

// step is one cell of a kernel test and what it must produce.
type step struct {
	code       string
	env        map[string]string
	wantEvents []wire.Event // every event; IDs are filled in
	wantStdout string       // raw output of child processes
	wantCount  int
	wantStatus string
	wantReason string
}

// runSteps runs steps in one kernel and checks each literally.
func runSteps(t *testing.T, k *kernelClient, steps []step) {
	t.Helper()
	for i, s := range steps {
		res := k.execute(wire.Execute{Code: s.code, Env: s.env})
		want := make([]wire.Event, len(s.wantEvents))
		for j, ev := range s.wantEvents {
			ev.ID = res.done.ID
			want[j] = ev
		}
		if len(res.events) != 0 || len(want) != 0 {
			if !reflect.DeepEqual(res.events, want) {
				t.Errorf("cell %d %q: events\n%+v\nwant\n%+v", i, s.code, res.events, want)
			}
		}
		if string(res.stdout) != s.wantStdout || len(res.stderr) != 0 {
			t.Errorf("cell %d %q: raw stdout %q, stderr %q; want %q", i, s.code, res.stdout, res.stderr, s.wantStdout)
		}
		if res.done.ExecutionCount != s.wantCount || res.done.Status != s.wantStatus || res.done.Reason != s.wantReason {
			t.Errorf("cell %d %q: done %+v, want count %d, %s/%s", i, s.code, res.done, s.wantCount, s.wantStatus, s.wantReason)
		}
	}
}

func stream(name, text string) wire.Event {
	return wire.Event{Type: "stream", Stream: name, Text: text}
}

func execResult(count int, data map[string]any) wire.Event {
	return wire.Event{Type: "execute_result", Data: data, ExecutionCount: count}
}

func displayed(data map[string]any) wire.Event {
	return wire.Event{Type: "display_data", Data: data}
}

func TestPythonKernelCells(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		steps []step
	}{
		{
			name: "result and execution count",
			steps: []step{
				{code: "x = 41", wantCount: 1, wantStatus: "ok", wantReason: "ok"},
				{code: "x + 1", wantEvents: []wire.Event{execResult(2, map[string]any{"text/plain": "42"})}, wantCount: 2, wantStatus: "ok", wantReason: "ok"},
			},
		},
		{
			name: "no result",
			steps: []step{
				{code: "1 + 1;", wantCount: 1, wantStatus: "ok", wantReason: "ok"},
				{code: "2 + 2;  # silenced", wantCount: 2, wantStatus: "ok", wantReason: "ok"},
				{code: "None", wantCount: 3, wantStatus: "ok", wantReason: "ok"},
				{code: "print('p')", wantEvents: []wire.Event{stream("stdout", "p\n")}, wantCount: 4, wantStatus: "ok", wantReason: "ok"},
				{code: "y = 'a;'\ny  # a comment;", wantEvents: []wire.Event{execResult(5, map[string]any{"text/plain": "'a;'"})}, wantCount: 5, wantStatus: "ok", wantReason: "ok"},
			},
		},
		{
			name: "empty cell counts nothing",
			steps: []step{
				{code: "1", wantEvents: []wire.Event{execResult(1, map[string]any{"text/plain": "1"})}, wantCount: 1, wantStatus: "ok", wantReason: "ok"},
				{code: "  \n", wantCount: 1, wantStatus: "ok", wantReason: "ok"},
				{code: "2", wantEvents: []wire.Event{execResult(2, map[string]any{"text/plain": "2"})}, wantCount: 2, wantStatus: "ok", wantReason: "ok"},
			},
		},
		{
			name: "output in order",
			steps: []step{
				{
					code: "import sys\nprint('a')\nprint('b', file=sys.stderr)\ndisplay(1, 'two')\nprint('c')\n3",
					wantEvents: []wire.Event{
						stream("stdout", "a\n"),
						stream("stderr", "b\n"),
						displayed(map[string]any{"text/plain": "1"}),
						displayed(map[string]any{"text/plain": "'two'"}),
						stream("stdout", "c\n"),
						execResult(1, map[string]any{"text/plain": "3"}),
					},
					wantCount: 1, wantStatus: "ok", wantReason: "ok",
				},
			},
		},
		{
			name: "rich reprs",
			steps: []step{
				{
					code:       "class H:\n    def _repr_html_(self): return '<b>hi</b>'\n    def __repr__(self): return 'H()'\ndisplay(H())",
					wantEvents: []wire.Event{displayed(map[string]any{"text/html": "<b>hi</b>", "text/plain": "H()"})},
					wantCount:  1, wantStatus: "ok", wantReason: "ok",
				},
				{
					code: "class R:\n" +
						"    def _repr_png_(self): return b'\\x89PNG'\n" +
						"    def _repr_svg_(self): return '<svg/>'\n" +
						"    def _repr_json_(self): return {'a': [1, None]}\n" +
						"    def _repr_markdown_(self): return ('*m*', {'k': 'v'})\n" +
						"    def _repr_latex_(self): return None\n" +
						"    def __repr__(self): return 'R'\n" +
						"R()",
					wantEvents: []wire.Event{{
						Type: "execute_result",
						Data: map[string]any{
							"image/png":        "iVBORw==",
							"image/svg+xml":    "<svg/>",
							"application/json": map[string]any{"a": []any{float64(1), nil}},
							"text/markdown":    "*m*",
							"text/plain":       "R",
						},
						Metadata:       map[string]any{"text/markdown": map[string]any{"k": "v"}},
						ExecutionCount: 2,
					}},
					wantCount: 2, wantStatus: "ok", wantReason: "ok",
				},
				{
					code: "class B:\n" +
						"    def _repr_mimebundle_(self, include=None, exclude=None): return {'text/x-b': 'b', 'text/plain': 'bundle'}\n" +
						"    def _repr_html_(self): raise ValueError('ignored')\n" +
						"display(B(), raw=False)\ndisplay({'text/plain': 'raw'}, raw=True)",
					wantEvents: []wire.Event{
						displayed(map[string]any{"text/x-b": "b", "text/plain": "bundle"}),
						displayed(map[string]any{"text/plain": "raw"}),
					},
					wantCount: 3, wantStatus: "ok", wantReason: "ok",
				},
				{
					code:       "class C:\n    def __getattr__(self, name): return lambda *a, **k: 'junk'\n    def __repr__(self): return 'C'\nC()",
					wantEvents: []wire.Event{execResult(4, map[string]any{"text/plain": "C"})},
					wantCount:  4, wantStatus: "ok", wantReason: "ok",
				},
			},
		},
		{
			name: "state, environment and top-level await",
			steps: []step{
				{code: "import os\ndef f(n):\n    return n * 2", wantCount: 1, wantStatus: "ok", wantReason: "ok"},
				{code: "f(21), os.environ['FOO']", env: map[string]string{"FOO": "bar"}, wantEvents: []wire.Event{execResult(2, map[string]any{"text/plain": "(42, 'bar')"})}, wantCount: 2, wantStatus: "ok", wantReason: "ok"},
				{code: "import asyncio\nawait asyncio.sleep(0.01)\nv = await asyncio.sleep(0, 7)\nv", wantEvents: []wire.Event{execResult(3, map[string]any{"text/plain": "7"})}, wantCount: 3, wantStatus: "ok", wantReason: "ok"},
				{code: "__name__, sys.argv if 'sys' in dir() else None", wantEvents: []wire.Event{execResult(4, map[string]any{"text/plain": "('__main__', None)"})}, wantCount: 4, wantStatus: "ok", wantReason: "ok"},
			},
		},
		{
			name: "child processes write raw output",
			steps: []step{
				{code: "import os\nos.system('echo hi')", wantEvents: []wire.Event{execResult(1, map[string]any{"text/plain": "0"})}, wantStdout: "hi\n", wantCount: 1, wantStatus: "ok", wantReason: "ok"},
				{code: "import subprocess, sys\nsubprocess.run(['echo', 'sub'], stdout=sys.stdout).returncode", wantEvents: []wire.Event{execResult(2, map[string]any{"text/plain": "0"})}, wantStdout: "sub\n", wantCount: 2, wantStatus: "ok", wantReason: "ok"},
			},
		},
		{
			name: "no stdin",
			steps: []step{
				{code: "try:\n    input()\nexcept EOFError:\n    print('eof')", wantEvents: []wire.Event{stream("stdout", "eof\n")}, wantCount: 1, wantStatus: "ok", wantReason: "ok"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k := startKernel(t, testConfig(t, LanguagePython), nil)
			runSteps(t, k, tt.steps)
		})
	}
}

func TestPythonKernelErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		setup     string
		code      string
		wantName  string
		wantValue string
		wantLines []string // lines the traceback holds, in order
	}{
		{
			name:      "division by zero",
			code:      "1/0",
			wantName:  "ZeroDivisionError",
			wantValue: "division by zero",
			wantLines: []string{"Traceback (most recent call last):", `  File "<cell-1>", line 1, in <module>`, "    1/0", "ZeroDivisionError: division by zero"},
		},
		{
			name:      "in a function of an earlier cell",
			setup:     "def f():\n    return {}['k']",
			code:      "x = 1\nf()",
			wantName:  "KeyError",
			wantValue: "'k'",
			wantLines: []string{"Traceback (most recent call last):", `  File "<cell-2>", line 2, in <module>`, "    f()", `  File "<cell-1>", line 2, in f`, "    return {}['k']", "KeyError: 'k'"},
		},
		{
			// clearcache empties linecache; the cells' lines come back for
			// the traceback.
			name:      "in a function of an earlier cell, linecache cleared",
			setup:     "def f():\n    return {}['k']",
			code:      "import linecache\nlinecache.clearcache()\nf()",
			wantName:  "KeyError",
			wantValue: "'k'",
			wantLines: []string{"Traceback (most recent call last):", `  File "<cell-2>", line 3, in <module>`, "    f()", `  File "<cell-1>", line 2, in f`, "    return {}['k']", "KeyError: 'k'"},
		},
		{
			name:      "syntax error",
			code:      "print(",
			wantName:  "SyntaxError",
			wantValue: "'(' was never closed (<cell-1>, line 1)",
			wantLines: []string{`  File "<cell-1>", line 1`, "    print(", "SyntaxError: '(' was never closed"},
		},
		{
			name:      "chained",
			code:      "try:\n    1/0\nexcept Exception as e:\n    raise ValueError('v') from e",
			wantName:  "ValueError",
			wantValue: "v",
			wantLines: []string{"ZeroDivisionError: division by zero", "The above exception was the direct cause of the following exception:", `  File "<cell-1>", line 4, in <module>`, "ValueError: v"},
		},
		{
			name:      "in a repr",
			code:      "class A:\n    def __repr__(self): raise RuntimeError('no repr')\nA()",
			wantName:  "RuntimeError",
			wantValue: "no repr",
			wantLines: []string{"Traceback (most recent call last):", `  File "<cell-1>", line 2, in __repr__`, "RuntimeError: no repr"},
		},
		{
			name:      "awaited",
			code:      "async def g():\n    raise OSError('io')\nawait g()",
			wantName:  "OSError",
			wantValue: "io",
			wantLines: []string{"Traceback (most recent call last):", `  File "<cell-1>", line 3, in <module>`, `  File "<cell-1>", line 2, in g`, "OSError: io"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k := startKernel(t, testConfig(t, LanguagePython), nil)
			if tt.setup != "" {
				k.execute(wire.Execute{Code: tt.setup}).mustDone(t, "ok", "ok")
			}
			res := k.execute(wire.Execute{Code: tt.code})
			res.mustDone(t, "error", "error")
			e := res.errorEvent(t)
			if e.Name != tt.wantName || e.Value != tt.wantValue {
				t.Errorf("error %q %q, want %q %q", e.Name, e.Value, tt.wantName, tt.wantValue)
			}
			if res.done.Error == nil || !reflect.DeepEqual(*res.done.Error, e) {
				t.Errorf("done error %+v, want the event's %+v", res.done.Error, e)
			}
			next := 0
			for _, line := range e.Traceback {
				if next < len(tt.wantLines) && line == tt.wantLines[next] {
					next++
				}
				if strings.Contains(line, "paddock") || strings.Contains(line, "asyncio") {
					t.Errorf("traceback shows the kernel: %q", line)
				}
			}
			if next < len(tt.wantLines) {
				t.Errorf("traceback\n%s\nlacks, in order, %q", strings.Join(e.Traceback, "\n"), tt.wantLines[next:])
			}
			// The kernel carries on.
			if r := k.execute(wire.Execute{Code: "'still here'"}); len(r.events) != 1 || r.events[0].Data["text/plain"] != "'still here'" {
				t.Errorf("next cell: %+v", r.events)
			}
		})
	}
}

// A cell costs the kernel the same after a hundred cells as after one:
// it looks up a fixed number of linecache entries, not one per earlier
// cell (which made a session's `x + 1` take 2.5 ms after 18,000 cells
// against 1.7 ms at first).
func TestPythonKernelCellCostIsFlat(t *testing.T) {
	t.Parallel()
	k := startKernel(t, testConfig(t, LanguagePython), nil)
	k.execute(wire.Execute{Code: "import linecache\n" +
		"class Counting(dict):\n" +
		"    lookups = 0\n" +
		"    def __contains__(self, key):\n" +
		"        Counting.lookups += 1\n" +
		"        return dict.__contains__(self, key)\n"}).mustDone(t, "ok", "ok")
	for range 100 {
		k.execute(wire.Execute{Code: "x = 1"}).mustDone(t, "ok", "ok")
	}
	k.execute(wire.Execute{Code: "linecache.cache = Counting(linecache.cache)\nCounting.lookups = 0"}).mustDone(t, "ok", "ok")
	k.execute(wire.Execute{Code: "x = 2"}).mustDone(t, "ok", "ok")
	res := k.execute(wire.Execute{Code: "Counting.lookups"})
	res.mustDone(t, "ok", "ok")
	if len(res.events) != 1 {
		t.Fatalf("events %+v, want the count", res.events)
	}
	// One lookup for each of the last two cells: is the latest earlier
	// cell still cached?
	if n, _ := strconv.Atoi(fmt.Sprint(res.events[0].Data["text/plain"])); n < 1 || n > 4 {
		t.Errorf("the last two cells made %v linecache lookups after 102 cells, want 1 to 4", res.events[0].Data["text/plain"])
	}
	// The lines are all still there for a traceback.
	if r := k.execute(wire.Execute{Code: "all('<cell-%d>' % i in linecache.cache for i in range(1, 104))"}); len(r.events) != 1 || r.events[0].Data["text/plain"] != "True" {
		t.Errorf("every cell's lines cached: %+v", r.events)
	}
}

func TestPythonKernelStreams(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, LanguagePython)
	k := startKernel(t, cfg, nil)
	// The cell prints a line, unflushed, then waits for a file the test
	// creates only once the line has come: the line streamed while the
	// cell ran.
	req := wire.Execute{Code: "import os, time\nprint('first')\nwhile not os.path.exists('go'):\n    time.sleep(0.01)\nprint('second')"}
	start := k.startCell(&req)
	k.waitStdout(req.ID, "first\n")
	touch(t, cfg.Workdir, "go")
	res := k.collect(req.ID, start)
	res.mustDone(t, "ok", "ok")
	if got := res.text("stdout"); got != "second\n" {
		t.Errorf("stdout after the release %q, want %q", got, "second\n")
	}
	// Partial lines and bytes on sys.stdout.buffer are text too.
	res = k.execute(wire.Execute{Code: "import sys\nsys.stdout.write('no newline')\nsys.stdout.flush()\nsys.stdout.buffer.write('é'.encode()[:1])\nsys.stdout.buffer.write('é'.encode()[1:] + b'\\xff')"})
	if got := res.text("stdout"); got != "no newlineé\ufffd" {
		t.Errorf("stdout %q", got)
	}
}

func TestPythonKernelMatplotlib(t *testing.T) {
	t.Parallel()
	k := startKernel(t, testConfig(t, LanguagePython), nil)
	res := k.execute(wire.Execute{Code: "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()\nfig = plt.figure()\nplt.plot([3, 2, 1]);"})
	res.mustDone(t, "ok", "ok")
	rich := res.rich()
	if len(rich) != 2 {
		t.Fatalf("events %+v, want two figures", res.events)
	}
	for _, ev := range rich {
		b64, _ := ev.Data["image/png"].(string)
		png, err := base64.StdEncoding.DecodeString(b64)
		if ev.Type != "display_data" || err != nil || !strings.HasPrefix(string(png), "\x89PNG\r\n\x1a\n") {
			t.Errorf("event %s with %d bytes of png (%v), want a PNG display", ev.Type, len(png), err)
		}
		if plain, _ := ev.Data["text/plain"].(string); !strings.HasPrefix(plain, "<Figure size") {
			t.Errorf("text/plain %q", plain)
		}
	}
	if res.text("stderr") != "" {
		t.Errorf("stderr %q", res.text("stderr"))
	}
	// Every figure was closed.
	if r := k.execute(wire.Execute{Code: "len(plt.get_fignums())"}); len(r.events) != 1 || r.events[0].Data["text/plain"] != "0" {
		t.Errorf("open figures: %+v", r.events)
	}
}

func TestPythonKernelPandas(t *testing.T) {
	t.Parallel()
	k := startKernel(t, testConfig(t, LanguagePython), nil)
	res := k.execute(wire.Execute{Code: "import pandas as pd\npd.DataFrame({'a': [1, 2]})"})
	res.mustDone(t, "ok", "ok")
	if len(res.events) != 1 || res.events[0].Type != "execute_result" {
		t.Fatalf("events %+v, want one result", res.events)
	}
	data := res.events[0].Data
	if html, _ := data["text/html"].(string); !strings.Contains(html, "<table") {
		t.Errorf("text/html %q, want a table", html)
	}
	if plain := data["text/plain"]; plain != "   a\n0  1\n1  2" {
		t.Errorf("text/plain %q", plain)
	}
}

// A kernel opened after a ping does not reseed again: the driver did when
// pinged. Without a ping it reseeds at open. The warm-up counts random.seed
// calls; the driver reseeds once after the warm-up on its own.
func TestPythonKernelReseedOnPing(t *testing.T) {
	t.Parallel()
	for _, pings := range []int{0, 1} {
		t.Run(fmt.Sprint(pings, " pings"), func(t *testing.T) {
			t.Parallel()
			cfg := testConfig(t, LanguagePython)
			cfg.Warmup = "import random\n_seed = random.seed\nrandom.calls = 0\n" +
				"def _counted(*a, **k):\n    random.calls += 1\n    _seed(*a, **k)\nrandom.seed = _counted"
			c := startAgent(t, cfg)
			c.hello()
			for i := range pings {
				c.ping(fmt.Sprint("p", i))
			}
			k := &kernelClient{client: c, acks: map[uint64]wire.Ack{}}
			id := k.nextID()
			if a := k.call(wire.TypeKernel, id, wire.KernelOpen{ID: id}); a.Error != "" {
				t.Fatalf("kernel open: %+v; log:\n%s", a, c.log)
			}
			res := k.execute(wire.Execute{Code: "import random; print(random.calls)"})
			res.mustDone(t, "ok", "ok")
			if got := res.text("stdout"); got != "2\n" {
				t.Errorf("random.seed calls = %q, want 2", got)
			}
		})
	}
}
