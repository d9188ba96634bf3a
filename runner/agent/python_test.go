package agent

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner/wire"
)

func TestPythonHello(t *testing.T) {
	t.Parallel()
	c := startAgent(t, testConfig(t, LanguagePython))
	h := c.hello()
	if h.Version != 1 || h.Language != "python" {
		t.Errorf("hello = %+v, want version 1, language python", h)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", h.Interpreter)); err != nil {
		t.Errorf("interpreter pid %d: %v", h.Interpreter, err)
	}
}

func TestPythonRun(t *testing.T) {
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
			req:        wire.Run{Code: "print(6*7)"},
			wantStdout: "42\n",
			wantReason: "ok",
		},
		{
			name:       "stderr and exit code",
			req:        wire.Run{Code: "import sys\nsys.stderr.write('bad\\n')\nsys.exit(3)"},
			wantStderr: "bad\n",
			wantCode:   3,
			wantReason: "error",
		},
		{
			name: "uncaught exception",
			req:  wire.Run{Code: "def f():\n    1/0\nf()"},
			wantStderr: "Traceback (most recent call last):\n" +
				"  File \"<string>\", line 3, in <module>\n" +
				"  File \"<string>\", line 2, in f\n" +
				"ZeroDivisionError: division by zero\n",
			wantCode:   1,
			wantReason: "error",
		},
		{
			name: "syntax error",
			req:  wire.Run{Code: "print("},
			wantStderr: "  File \"<string>\", line 1\n" +
				"    print(\n" +
				"         ^\n" +
				"SyntaxError: '(' was never closed\n",
			wantCode:   1,
			wantReason: "error",
		},
		{
			name:       "system exit with a message",
			req:        wire.Run{Code: "raise SystemExit('bye')"},
			wantStderr: "bye\n",
			wantCode:   1,
			wantReason: "error",
		},
		{
			name:       "system exit none",
			req:        wire.Run{Code: "import sys; print('x'); sys.exit()"},
			wantStdout: "x\n",
			wantReason: "ok",
		},
		{
			// The child runs the driver's exit path too; only the
			// program's own end may end the run.
			name: "forked child exits first",
			req: wire.Run{Code: "import os, sys, time\npid = os.fork()\nif pid == 0:\n    sys.exit(0)\n" +
				"os.waitpid(pid, 0)\ntime.sleep(0.3)\nprint('parent done')\nsys.exit(4)"},
			wantStdout: "parent done\n",
			wantCode:   4,
			wantReason: "error",
		},
		{
			name:       "stdin",
			req:        wire.Run{Code: "print(input())", Stdin: []byte("hello\n")},
			wantStdout: "hello\n",
			wantReason: "ok",
		},
		{
			// Past a pipe's buffer, stdin and the request are written
			// while the program reads them.
			name:       "stdin larger than a pipe",
			req:        wire.Run{Code: "import sys\nprint(len(sys.stdin.read()))", Stdin: bytes.Repeat([]byte("x"), 200_000)},
			wantStdout: "200000\n",
			wantReason: "ok",
		},
		{
			name:       "stdin larger than a pipe, unread",
			req:        wire.Run{Code: "print('skipped')", Stdin: bytes.Repeat([]byte("x"), 200_000)},
			wantStdout: "skipped\n",
			wantReason: "ok",
		},
		{
			name:       "code larger than a pipe",
			req:        wire.Run{Code: "x = '" + strings.Repeat("y", 200_000) + "'\nprint(len(x))"},
			wantStdout: "200000\n",
			wantReason: "ok",
		},
		{
			name: "no stdin",
			req:  wire.Run{Code: "input()"},
			wantStderr: "Traceback (most recent call last):\n" +
				"  File \"<string>\", line 1, in <module>\n" +
				"EOFError: EOF when reading a line\n",
			wantCode:   1,
			wantReason: "error",
		},
		{
			name: "files",
			req: wire.Run{
				Code: "import helper\nprint(open('data/in.txt').read(), helper.X)",
				Files: []wire.File{
					{Path: "data/in.txt", Content: []byte("abc")},
					{Path: "helper.py", Content: []byte("X = 5\n")},
				},
			},
			wantStdout: "abc 5\n",
			wantReason: "ok",
		},
		{
			name: "argv and env",
			req: wire.Run{
				Code: "import os, subprocess, sys\nprint(sys.argv)\nprint(os.environ['FOO'])\n" +
					"print(subprocess.run(['sh', '-c', 'echo $FOO'], capture_output=True, text=True).stdout, end='')",
				Args: []string{"a", "b c"},
				Env:  map[string]string{"FOO": "bar"},
			},
			wantStdout: "['-c', 'a', 'b c']\nbar\nbar\n",
			wantReason: "ok",
		},
		{
			name:       "minimal environment",
			req:        wire.Run{Code: "import os; print(sorted(os.environ))"},
			wantStdout: "['HOME', 'LANG', 'MPLBACKEND', 'PATH', 'PYTHONDONTWRITEBYTECODE']\n",
			wantReason: "ok",
		},
		{
			name:       "fresh main module",
			req:        wire.Run{Code: "import sys\nprint(__name__, sorted(globals()), sys.modules['__main__'] is sys.modules[__name__])"},
			wantStdout: "__main__ ['__annotations__', '__builtins__', '__doc__', '__loader__', '__name__', '__package__', '__spec__', 'sys'] True\n",
			wantReason: "ok",
		},
		{
			name:       "no leaked descriptors",
			req:        wire.Run{Code: "import os, sys\nprint(len(os.listdir('/proc/self/fd')), flush=True)\nos.system('ls /proc/self/fd | wc -l')"},
			wantStdout: "6\n4\n", // the driver: 0-2, its two channel pipes, the listing; a child: 0-2 and the listing
			wantReason: "ok",
		},
		{
			name:       "binary output",
			req:        wire.Run{Code: "import sys; sys.stdout.buffer.write(b'\\x00\\xff\\xfe\\xc3\\x28')"},
			wantStdout: "\x00\xff\xfe\xc3\x28",
			wantReason: "ok",
		},
		{
			name:       "framing injection",
			req:        wire.Run{Code: "print('X\\x00\\x00\\x00\\x05{}\\nE')"},
			wantStdout: "X\x00\x00\x00\x05{}\nE\n",
			wantReason: "ok",
		},
		{
			name:       "killed by a signal",
			req:        wire.Run{Code: "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"},
			wantCode:   137,
			wantReason: "killed",
		},
		{
			name:       "os._exit without the driver's report",
			req:        wire.Run{Code: "import os\nprint('x', flush=True)\nos.close(4)\nos._exit(3)"},
			wantStdout: "x\n",
			wantCode:   3,
			wantReason: "error",
		},
		{
			// The thread prints after main, and is still running when the
			// program's last line is over.
			name:       "non-daemon threads are joined before exit",
			req:        wire.Run{Code: "import threading, time\nmain = threading.Event()\nthreading.Thread(target=lambda: (main.wait(), time.sleep(0.2), print('late'))).start()\nprint('main')\nmain.set()"},
			wantStdout: "main\nlate\n",
			wantReason: "ok",
		},
		{
			name:       "atexit and buffered output",
			req:        wire.Run{Code: "import atexit, sys\natexit.register(print, 'bye')\nprint('hi', end='')\nsys.exit(2)"},
			wantStdout: "hibye\n",
			wantCode:   2,
			wantReason: "error",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := startAgent(t, testConfig(t, LanguagePython))
			c.hello()
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
			if bytes.Contains(res.stderr, []byte("_paddock")) {
				t.Errorf("stderr shows the driver: %q", res.stderr)
			}
		})
	}
}

func TestPythonWorkdir(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, LanguagePython)
	c := startAgent(t, cfg)
	c.hello()
	res := c.run(wire.Run{Code: "import os; print(os.getcwd()); print(os.environ['HOME'])"})
	res.mustExit(t)
	if want := cfg.Workdir + "\n" + cfg.Workdir + "\n"; string(res.stdout) != want {
		t.Errorf("stdout = %q, want %q", res.stdout, want)
	}
}

func TestPythonNoStdinIsFast(t *testing.T) {
	t.Parallel()
	c := startAgent(t, testConfig(t, LanguagePython))
	c.hello()
	// A run whose input() waited for more would end by its timeout.
	res := c.run(wire.Run{Code: "input()", TimeoutMS: 60_000})
	if exit := res.mustExit(t); exit.Reason != "error" {
		t.Errorf("exit = %+v after %v, want error (EOF), not the timeout", exit, res.elapsed)
	}
}

// Stdin past a pipe's buffer that the program never reads must not hold
// up the run: its timer still ends it.
func TestPythonUnreadStdinTimesOut(t *testing.T) {
	t.Parallel()
	c := startAgent(t, testConfig(t, LanguagePython))
	c.hello()
	res := c.run(wire.Run{Code: "while True: pass", Stdin: bytes.Repeat([]byte("x"), 200_000), TimeoutMS: 500})
	if exit := res.mustExit(t); exit.Reason != "timeout" {
		t.Errorf("exit = %+v, want the timeout", exit)
	}
}

func TestPythonTimeout(t *testing.T) {
	t.Parallel()
	checkTimeoutKills(t, LanguagePython, "import os\nprint(os.getpid(), flush=True)\nwhile True: pass")
}

func TestPythonOutputLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		req        wire.Run
		wantStdout int
		wantStderr int
		wantOut    bool
		wantErr    bool
	}{
		{
			name:       "one big write",
			req:        wire.Run{Code: "print('A'*10**7)", MaxStdout: 1 << 20, TimeoutMS: 60_000},
			wantStdout: 1 << 20,
			wantOut:    true,
		},
		{
			name:       "many small writes",
			req:        wire.Run{Code: "[print('A'*100) for _ in iter(int, 1)]", MaxStdout: 1 << 20, TimeoutMS: 60_000},
			wantStdout: 1 << 20,
			wantOut:    true,
		},
		{
			name:       "stderr",
			req:        wire.Run{Code: "import sys\nprint('x', flush=True)\nsys.stderr.write('E'*100000)", MaxStderr: 1000, TimeoutMS: 60_000},
			wantStdout: 2,
			wantStderr: 1000,
			wantErr:    true,
		},
		{
			name:       "exactly the cap",
			req:        wire.Run{Code: "import sys; sys.stdout.write('A'*1000)", MaxStdout: 1000},
			wantStdout: 1000,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := startAgent(t, testConfig(t, LanguagePython))
			c.hello()
			res := c.run(tt.req)
			exit := res.mustExit(t)
			if len(res.stdout) != tt.wantStdout || len(res.stderr) != tt.wantStderr {
				t.Errorf("got %d stdout, %d stderr bytes, want %d, %d", len(res.stdout), len(res.stderr), tt.wantStdout, tt.wantStderr)
			}
			if exit.StdoutTruncated != tt.wantOut || exit.StderrTruncated != tt.wantErr {
				t.Errorf("exit = %+v, want truncated stdout %v, stderr %v", exit, tt.wantOut, tt.wantErr)
			}
			wantReason := "ok"
			if tt.wantOut || tt.wantErr {
				wantReason = "output_limit"
			}
			if exit.Reason != wantReason {
				t.Errorf("reason = %s, want %s", exit.Reason, wantReason)
			}
		})
	}
}

func TestPythonGrandchildDoesNotDelay(t *testing.T) {
	t.Parallel()
	c := startAgent(t, testConfig(t, LanguagePython))
	c.hello()
	res := c.run(wire.Run{
		Code:      "import subprocess\np = subprocess.Popen(['sleep', '600'])\nprint(p.pid)\nprint('done')",
		TimeoutMS: 60_000,
	})
	exit := res.mustExit(t)
	if exit.Reason != "ok" || exit.ExitCode != 0 {
		t.Errorf("exit = %+v, want ok", exit)
	}
	// A run that waited for the grandchild would wait for its 600 s
	// sleep; the bound, far from that and from any start, is a safety net.
	if res.elapsed > time.Minute {
		t.Errorf("result after %v: the run waited for the grandchild", res.elapsed)
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

func TestPythonWarmup(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, LanguagePython)
	cfg.Warmup = "import json, sys\nprint('warming up')\nprint('warn', file=sys.stderr)"
	c := startAgent(t, cfg)
	c.hello()
	res := c.run(wire.Run{Code: "import sys; print('json' in sys.modules, 'warm' in dir())"})
	res.mustExit(t)
	if string(res.stdout) != "True False\n" || len(res.stderr) != 0 {
		t.Errorf("stdout %q, stderr %q; want only the run's output", res.stdout, res.stderr)
	}
}

// A ping before the first request has the driver reseed then (a restored
// clone is pinged while it waits in the pool), and the run does not reseed
// again unless files came with it. The warm-up counts random.seed calls;
// the driver reseeds once after the warm-up on its own.
func TestPythonReseedOnPing(t *testing.T) {
	t.Parallel()
	const counting = "import random\n_seed = random.seed\nrandom.calls = 0\n" +
		"def _counted(*a, **k):\n    random.calls += 1\n    _seed(*a, **k)\nrandom.seed = _counted"
	const report = "import random; print(random.calls)"
	tests := []struct {
		name  string
		pings int
		files []wire.File
		want  string
	}{
		{name: "no ping: the run reseeds", want: "2\n"},
		{name: "ping: the reseed is done before the run", pings: 1, want: "2\n"},
		{name: "two pings: one reseed each", pings: 2, want: "3\n"},
		{name: "ping, then a run with files: reseeds again", pings: 1,
			files: []wire.File{{Path: "m.py", Content: []byte("x = 1\n")}}, want: "3\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig(t, LanguagePython)
			cfg.Warmup = counting
			c := startAgent(t, cfg)
			c.hello()
			for i := range tc.pings {
				c.ping(fmt.Sprint("p", i))
			}
			res := c.run(wire.Run{Code: report, Files: tc.files})
			res.mustExit(t)
			if string(res.stdout) != tc.want {
				t.Errorf("random.seed calls = %q, want %q (stderr %q)", res.stdout, tc.want, res.stderr)
			}
		})
	}
}

// The driver hints at a refused fork or a full disk, and the agent names
// the limit only when its own reading finds the limit at its ceiling.
// Outside a sandbox the reading is stubbed (startAgentLimits). A refused
// fork cannot be made here (the tests run as root, past RLIMIT_NPROC), so
// a C function raising EAGAIN stands in for fork: a read of an empty
// non-blocking pipe, called as fork().
func TestPythonLimitHints(t *testing.T) {
	t.Parallel()
	const setup = "import os, functools\nr, w = os.pipe()\nos.set_blocking(r, False)\n"
	// A forged hint, framed as the driver frames it.
	forge := func(limit string) string {
		return fmt.Sprintf("import os\nb = b'{\"op\":\"limit\",\"limit\":\"%s\"}'\nos.write(4, len(b).to_bytes(4, 'big') + b)\n", limit)
	}
	atCeiling := limitState{tasks: 64, nproc: 64, free: 0}
	below := limitState{tasks: 63, nproc: 64, free: 4096}
	tests := []struct {
		name, code string
		code1      int    // exit code
		atCeiling  string // reason with both limits at their ceiling
	}{
		{name: "EAGAIN from a call named fork", code: setup + "fork = functools.partial(os.read, r, 1)\n[fork() for _ in range(3)]", code1: 1, atCeiling: "pids_limit"},
		{name: "EAGAIN from a call named forkpty", code: setup + "class P: forkpty = functools.partial(os.read, r, 1)\nP.forkpty()", code1: 1, atCeiling: "pids_limit"},
		{name: "EAGAIN from a read", code: setup + "os.read(r, 1)", code1: 1, atCeiling: "error"},
		{name: "EAGAIN from a read named otherwise", code: setup + "spawn = functools.partial(os.read, r, 1)\nspawn()", code1: 1, atCeiling: "error"},
		{name: "another error from fork", code: "import os\ndef fork(): raise BlockingIOError(11, 'x')\nos.fork = fork\nos.fork()", code1: 1, atCeiling: "error"},
		{name: "caught, then exit 1", code: setup + "fork = functools.partial(os.read, r, 1)\ntry: fork()\nexcept OSError: raise SystemExit(1)", code1: 1, atCeiling: "error"},
		{name: "uncaught ENOSPC", code: "raise OSError(28, 'No space left on device')", code1: 1, atCeiling: "disk_limit"},
		{name: "ENOSPC caught, then 1/0", code: "try: raise OSError(28, 'x')\nexcept OSError: pass\n1/0", code1: 1, atCeiling: "error"},
		// A forged hint yields what an honest program in the same state
		// would get, and never changes the exit code.
		{name: "forged process hint, exit 3", code: forge("processes") + "raise SystemExit(3)", code1: 3, atCeiling: "pids_limit"},
		{name: "forged disk hint, exit 0", code: forge("disk"), code1: 0, atCeiling: "ok"},
		{name: "forged unknown hint", code: forge("pids") + "raise SystemExit(3)", code1: 3, atCeiling: "error"},
	}
	for _, tc := range tests {
		for _, st := range []limitState{atCeiling, below} {
			want := tc.atCeiling
			if st == below && want != "ok" {
				want = "error"
			}
			t.Run(fmt.Sprintf("%s, %d of %d tasks, %d bytes free", tc.name, st.tasks, st.nproc, st.free), func(t *testing.T) {
				t.Parallel()
				c := startAgentLimits(t, testConfig(t, LanguagePython), st)
				c.hello()
				res := c.run(wire.Run{Code: tc.code})
				if res.exit == nil {
					t.Fatalf("no exit: %+v", res.fail)
				}
				if res.exit.Reason != want || res.exit.ExitCode != tc.code1 {
					t.Errorf("reason %q exit %d, want %q and %d; stderr %q", res.exit.Reason, res.exit.ExitCode, want, tc.code1, res.stderr)
				}
				// A clean exit is not read; every other end reports what
				// the reading found.
				wantReached := []string(nil)
				if st == atCeiling && tc.code1 != 0 {
					wantReached = []string{"processes", "disk"}
				}
				if !slices.Equal(res.exit.LimitsReached, wantReached) {
					t.Errorf("limits reached %q, want %q", res.exit.LimitsReached, wantReached)
				}
			})
		}
	}
}

// The exit status is the interpreter's own: a report forged on fd 4, in
// the driver's old exit format or any other, changes neither the exit code
// nor the reason.
func TestForgedExitReports(t *testing.T) {
	t.Parallel()
	frame := func(body string) string {
		return fmt.Sprintf("%q", string(rune(0))+string(rune(0))+string(rune(0))+string(rune(len(body)))+body)
	}
	tests := []struct {
		name, lang, code string
		wantCode         int
		wantReason       string
		wantStdout       string
	}{
		{name: "python, exit 0 forged, exit 3", lang: LanguagePython,
			code: "import os, sys\nos.write(4, " + "b" + frame(`{"op":"exit","code":0}`) + ")\nsys.exit(3)", wantCode: 3, wantReason: "error"},
		{name: "python, pids exit forged, exit 1", lang: LanguagePython,
			code: "import os, sys\nos.write(4, " + "b" + frame(`{"op":"exit","code":1,"limit":"pids"}`) + ")\nsys.exit(1)", wantCode: 1, wantReason: "error"},
		{name: "python, exit 3 forged, exit 0", lang: LanguagePython,
			code: "import os\nos.write(4, " + "b" + frame(`{"op":"exit","code":3}`) + ")", wantCode: 0, wantReason: "ok"},
		{name: "python, garbage on fd 4, exit 2", lang: LanguagePython,
			code: "import os, sys\nos.write(4, b'\\xff' * 300)\nsys.exit(2)", wantCode: 2, wantReason: "error"},
		{name: "node, exit 0 forged, exit 3", lang: LanguageNode,
			code: "const fs = require('fs');\nconst b = Buffer.from('{\"op\":\"exit\",\"code\":0}');\n" +
				"const f = Buffer.alloc(4 + b.length); f.writeUInt32BE(b.length, 0); b.copy(f, 4);\n" +
				// The driver's channel: the write-only pipe past the
				// standard streams whose other end is not in this process
				// (Node's own pipes have both ends here).
				"const fds = fs.readdirSync('/proc/self/fd').map(Number).filter((fd) => fd > 2).map((fd) => {\n" +
				"  try { return { fd, link: fs.readlinkSync('/proc/self/fd/' + fd), flags: parseInt(/flags:\\s*(\\d+)/.exec(fs.readFileSync('/proc/self/fdinfo/' + fd, 'utf8'))[1], 8) }; } catch (e) { return { fd, link: '' }; }\n});\n" +
				"for (const x of fds) {\n" +
				"  if (x.link.startsWith('pipe:') && (x.flags & 3) === 1 && fds.filter((y) => y.link === x.link).length === 1) { fs.writeSync(x.fd, f); console.log('forged'); }\n}\nprocess.exit(3)",
			wantStdout: "forged\n",
			wantCode:   3, wantReason: "error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := startAgentLimits(t, testConfig(t, tc.lang), limitState{tasks: 1, nproc: 64, free: 1 << 20})
			c.hello()
			res := c.run(wire.Run{Code: tc.code})
			if res.exit == nil {
				t.Fatalf("no exit: %+v", res.fail)
			}
			if res.exit.ExitCode != tc.wantCode || res.exit.Reason != tc.wantReason || string(res.stdout) != tc.wantStdout {
				t.Errorf("exit %d reason %q stdout %q, want %d, %q and %q; stderr %q", res.exit.ExitCode, res.exit.Reason, res.stdout, tc.wantCode, tc.wantReason, tc.wantStdout, res.stderr)
			}
		})
	}
}
