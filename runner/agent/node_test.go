package agent

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner/wire"
)

func TestNodeHello(t *testing.T) {
	t.Parallel()
	c := startAgent(t, testConfig(t, LanguageNode))
	if h := c.hello(); h.Version != 1 || h.Language != "node" || h.Interpreter <= 0 {
		t.Errorf("hello = %+v, want version 1, language node, a pid", h)
	}
}

func TestNodeRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		req        wire.Run
		wantStdout string
		wantStderr string
		wantCode   int
		wantReason string
	}{
		{
			name:       "print",
			req:        wire.Run{Code: "console.log(6*7)"},
			wantStdout: "42\n",
			wantReason: "ok",
		},
		{
			name:       "stderr and exit code",
			req:        wire.Run{Code: "console.error('bad'); process.exit(3)"},
			wantStderr: "bad\n",
			wantCode:   3,
			wantReason: "error",
		},
		{
			name:       "exit listeners run before the fast exit",
			req:        wire.Run{Code: "process.on('exit', c => console.log('exit', c)); setTimeout(() => { process.exitCode = 5 }, 20)"},
			wantStdout: "exit 5\n",
			wantCode:   5,
			wantReason: "error",
		},
		{
			name:       "exit code set",
			req:        wire.Run{Code: "process.exitCode = 4"},
			wantCode:   4,
			wantReason: "error",
		},
		{
			name:       "stdin",
			req:        wire.Run{Code: "let s = ''; process.stdin.on('data', d => s += d).on('end', () => console.log(s.trim()))", Stdin: []byte("hello\n")},
			wantStdout: "hello\n",
			wantReason: "ok",
		},
		{
			name:       "no stdin",
			req:        wire.Run{Code: "process.stdin.on('data', () => {}).on('end', () => console.log('eof'))"},
			wantStdout: "eof\n",
			wantReason: "ok",
		},
		{
			name: "files",
			req: wire.Run{
				Code: "console.log(require('./lib/m.js').x, require('fs').readFileSync('data.txt', 'utf8'))",
				Files: []wire.File{
					{Path: "lib/m.js", Content: []byte("exports.x = 5")},
					{Path: "data.txt", Content: []byte("abc")},
				},
			},
			wantStdout: "5 abc\n",
			wantReason: "ok",
		},
		{
			name: "argv and env",
			req: wire.Run{
				Code: "console.log(JSON.stringify(process.argv.slice(1)), process.env.FOO, __filename, __dirname, " +
					"require('child_process').execSync('echo $FOO').toString().trim())",
				Args: []string{"a", "b c"},
				Env:  map[string]string{"FOO": "bar"},
			},
			wantStdout: "[\"a\",\"b c\"] bar [eval] . bar\n",
			wantReason: "ok",
		},
		{
			name:       "minimal environment",
			req:        wire.Run{Code: "console.log(Object.keys(process.env).sort().join(' '))"},
			wantStdout: "HOME LANG MPLBACKEND PATH PYTHONDONTWRITEBYTECODE\n",
			wantReason: "ok",
		},
		{
			name:       "async work keeps it alive",
			req:        wire.Run{Code: "setTimeout(() => console.log('later'), 100); Promise.resolve().then(() => console.log('soon'))"},
			wantStdout: "soon\nlater\n",
			wantReason: "ok",
		},
		{
			name: "fork a module",
			req: wire.Run{
				Code:  "const c = require('child_process').fork('./child.js'); c.on('message', m => { console.log(m); c.disconnect() })",
				Files: []wire.File{{Path: "child.js", Content: []byte("process.send('hi from ' + require('path').basename(__filename))")}},
			},
			wantStdout: "hi from child.js\n",
			wantReason: "ok",
		},
		{
			name:       "top-level module scope",
			req:        wire.Run{Code: "console.log(typeof module, typeof exports, typeof require, require.main === undefined)"},
			wantStdout: "object object function true\n",
			wantReason: "ok",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := startAgent(t, testConfig(t, LanguageNode))
			c.hello()
			tt.req.TimeoutMS = 60_000
			res := c.run(tt.req)
			exit := res.mustExit(t)
			if string(res.stdout) != tt.wantStdout {
				t.Errorf("stdout = %q, want %q", res.stdout, tt.wantStdout)
			}
			if string(res.stderr) != tt.wantStderr {
				t.Errorf("stderr = %q, want %q", res.stderr, tt.wantStderr)
			}
			if exit.ExitCode != tt.wantCode || exit.Reason != tt.wantReason {
				t.Errorf("exit = %+v, want code %d, reason %s", exit, tt.wantCode, tt.wantReason)
			}
		})
	}
}

func TestNodeUncaughtException(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		code      string
		wantStart string
		want      []string
	}{
		{
			name:      "sync",
			code:      "function f() { throw new Error('boom') }\nf()",
			wantStart: "[eval]:1\nfunction f() { throw new Error('boom') }\n               ^\n\nError: boom\n    at f ([eval]:1:22)\n    at Object.<anonymous> ([eval]:2:1)\n",
		},
		{
			name:      "async",
			code:      "setTimeout(() => { throw new TypeError('late') }, 10)",
			wantStart: "[eval]:1\n",
			want:      []string{"TypeError: late\n    at Timeout._onTimeout ([eval]:1:26)"},
		},
		{
			name:      "syntax error",
			code:      "syntax(",
			wantStart: "[eval]:1\n",
			want:      []string{"SyntaxError: Unexpected end of input"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := startAgent(t, testConfig(t, LanguageNode))
			c.hello()
			res := c.run(wire.Run{Code: tt.code, TimeoutMS: 60_000})
			exit := res.mustExit(t)
			if exit.ExitCode != 1 || exit.Reason != "error" {
				t.Errorf("exit = %+v, want 1, error", exit)
			}
			if !bytes.HasPrefix(res.stderr, []byte(tt.wantStart)) {
				t.Errorf("stderr = %q, want it to start with %q", res.stderr, tt.wantStart)
			}
			for _, w := range tt.want {
				if !bytes.Contains(res.stderr, []byte(w)) {
					t.Errorf("stderr = %q, want it to contain %q", res.stderr, w)
				}
			}
			for _, leak := range []string{"paddock", "readSync", "[warmup]"} {
				if bytes.Contains(res.stderr, []byte(leak)) {
					t.Errorf("stderr shows the driver (%q): %q", leak, res.stderr)
				}
			}
		})
	}
}

func TestNodeTimeout(t *testing.T) {
	t.Parallel()
	checkTimeoutKills(t, LanguageNode, "console.log(process.pid); for (;;) {}")
}

func TestNodeOutputLimit(t *testing.T) {
	t.Parallel()
	c := startAgent(t, testConfig(t, LanguageNode))
	c.hello()
	res := c.run(wire.Run{Code: "process.stdout.write('A'.repeat(1e7))", MaxStdout: 1 << 20, TimeoutMS: 60_000})
	exit := res.mustExit(t)
	if len(res.stdout) != 1<<20 || !exit.StdoutTruncated || exit.Reason != "output_limit" {
		t.Errorf("got %d bytes, exit %+v; want 1048576 bytes, truncated, output_limit", len(res.stdout), exit)
	}
}

func TestNodeGrandchildDoesNotDelay(t *testing.T) {
	t.Parallel()
	c := startAgent(t, testConfig(t, LanguageNode))
	c.hello()
	res := c.run(wire.Run{
		Code:      "const c = require('child_process').spawn('sleep', ['600'], {stdio: 'inherit'}); c.unref(); console.log(c.pid); console.log('done')",
		TimeoutMS: 60_000,
	})
	exit := res.mustExit(t)
	// A run that waited for the grandchild would wait for its 600 s
	// sleep; the bound, far from that and from any start, is a safety net.
	if exit.Reason != "ok" || res.elapsed > time.Minute {
		t.Errorf("exit = %+v after %v, want ok: the run must not wait for the grandchild", exit, res.elapsed)
	}
	pidLine, rest, _ := strings.Cut(string(res.stdout), "\n")
	if rest != "done\n" {
		t.Errorf("stdout = %q, want a pid then done", res.stdout)
	}
	pid, err := strconv.Atoi(pidLine)
	if err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
}

func TestNodeWarmup(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, LanguageNode)
	cfg.Warmup = "globalThis.warmed = require('os').EOL.length; console.log('warming up'); console.error('warn')"
	c := startAgent(t, cfg)
	c.hello()
	res := c.run(wire.Run{Code: "console.log(warmed)"})
	res.mustExit(t)
	if string(res.stdout) != "1\n" || len(res.stderr) != 0 {
		t.Errorf("stdout %q, stderr %q; want only the run's output", res.stdout, res.stderr)
	}
}
