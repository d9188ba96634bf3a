package main

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// trustedRun is the part of a run response the trust tests look at.
type trustedRun struct {
	Stdout        string   `json:"stdout"`
	Stderr        string   `json:"stderr"`
	ExitCode      int      `json:"exit_code"`
	Reason        string   `json:"reason"`
	LimitsReached []string `json:"limits_reached"`
	SandboxID     string   `json:"sandbox_id"`
}

// forgeFrame is Python code writing body on fd 4 framed as the driver
// frames its reports (a 4-byte big-endian length, then the JSON).
func forgeFrame(body string) string {
	return "import os\nb = b'" + body + "'\nos.write(4, len(b).to_bytes(4, 'big') + b)\n"
}

// TestE2ETrustedResults: a run's exit code and reason are what the
// sandbox's agent saw, against real gVisor. Reports forged on the driver's
// channel change nothing; ordinary programs near a limit keep their plain
// reason; the real refusals keep theirs; limits_reached says what was at
// its ceiling.
func TestE2ETrustedResults(t *testing.T) {
	e := newE2E(t)
	tests := []struct {
		name      string
		lang      string
		code      string
		timeoutMS int
		limits    map[string]any
		exitCode  int
		reason    string
		reached   []string // limits_reached, exactly
		stdout    string   // exact, unless empty
		stderrHas string
	}{
		// Forged results.
		{name: "python: exit 0 forged on fd 4, exit 3", lang: "python",
			code:     forgeFrame(`{"op":"exit","code":0}`) + "print('forged')\nraise SystemExit(3)",
			exitCode: 3, reason: "error", stdout: "forged\n"},
		{name: "node: exit 0 forged on the driver's channel, exit 3", lang: "node",
			code: "const fs = require('fs');\nconst b = Buffer.from('{\"op\":\"exit\",\"code\":0}');\n" +
				"const f = Buffer.alloc(4 + b.length); f.writeUInt32BE(b.length, 0); b.copy(f, 4);\n" +
				// The driver's channel: the write-only pipe past the
				// standard streams whose other end is not in this process
				// (Node's own pipes have both ends here).
				"const fds = fs.readdirSync('/proc/self/fd').map(Number).filter((fd) => fd > 2).map((fd) => {\n" +
				"  try { return { fd, link: fs.readlinkSync('/proc/self/fd/' + fd), flags: parseInt(/flags:\\s*(\\d+)/.exec(fs.readFileSync('/proc/self/fdinfo/' + fd, 'utf8'))[1], 8) }; } catch (e) { return { fd, link: '' }; }\n});\n" +
				"for (const x of fds) {\n" +
				"  if (x.link.startsWith('pipe:') && (x.flags & 3) === 1 && fds.filter((y) => y.link === x.link).length === 1) { fs.writeSync(x.fd, f); console.log('forged'); }\n}\nprocess.exit(3)",
			exitCode: 3, reason: "error", stdout: "forged\n"},
		{name: "python: pids exit forged, no limit reached, exit 1", lang: "python",
			code:     forgeFrame(`{"op":"exit","code":1,"limit":"pids"}`) + "print('forged')\nraise SystemExit(1)",
			exitCode: 1, reason: "error", stdout: "forged\n"},
		{name: "python: process hint forged, no limit reached, exit 1", lang: "python",
			code:     forgeFrame(`{"op":"limit","limit":"processes"}`) + forgeFrame(`{"op":"limit","limit":"disk"}`) + "print('forged')\nraise SystemExit(1)",
			exitCode: 1, reason: "error", stdout: "forged\n"},

		// Ordinary programs near a limit (the template allows 64
		// processes and threads).
		{name: "62 sleeping children, exit 2", lang: "python",
			code:     "import subprocess, sys\nps = [subprocess.Popen(['sleep', '60']) for _ in range(62)]\nprint(len(ps))\nsys.exit(2)",
			exitCode: 2, reason: "error", stdout: "62\n"},
		// At the ceiling, but nothing refused: the reason stays, the
		// ceiling is reported.
		{name: "64 sleeping children, exit 2", lang: "python",
			code:     "import subprocess, sys\nps = [subprocess.Popen(['sleep', '60']) for _ in range(64)]\nprint(len(ps))\nsys.exit(2)",
			exitCode: 2, reason: "error", reached: []string{"processes"}, stdout: "64\n"},
		{name: "61 sleeping daemon threads, then past the timeout", lang: "python", timeoutMS: 3000,
			code: "import threading, time\nfor _ in range(61):\n    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n" +
				"print(threading.active_count(), flush=True)\ntime.sleep(60)",
			exitCode: 137, reason: "timeout", stdout: "62\n"},
		{name: "disk 16 MiB, 16 MB in /tmp, then 1/0", lang: "python", limits: map[string]any{"disk_mb": 16},
			code:     "with open('/tmp/f', 'wb') as f:\n    f.write(b'x' * 16_000_000)\nprint('wrote')\n1/0",
			exitCode: 1, reason: "error", stdout: "wrote\n", stderrHas: "ZeroDivisionError"},
		// The driver hints at a refused fork (an EAGAIN from a call named
		// fork), but the agent finds the processes far from their limit.
		{name: "EAGAIN from a read named fork", lang: "python",
			code:     "import os, functools\nr, w = os.pipe()\nos.set_blocking(r, False)\nfork = functools.partial(os.read, r, 1)\nfork()",
			exitCode: 1, reason: "error", stderrHas: "BlockingIOError"},

		// Real refusals. H07's fork bomb: every process forks until
		// refused and dies of it; 1 GiB keeps memory from running out
		// first.
		{name: "processes 32, H07 fork bomb", lang: "python", code: "import os; [os.fork() for _ in iter(int,1)]",
			limits:   map[string]any{"processes": 32, "memory_mb": 1024},
			exitCode: 1, reason: "pids_limit", reached: []string{"processes"}, stderrHas: "BlockingIOError"},
		{name: "node: processes 32, spawn until refused", lang: "node",
			code:     "const cp = require('child_process');\nconst ps = [];\n(function more() { ps.push(cp.spawn('sleep', ['60'])); setImmediate(more); })();",
			limits:   map[string]any{"processes": 32, "memory_mb": 1024},
			exitCode: 1, reason: "pids_limit", reached: []string{"processes"}, stderrHas: "EAGAIN"},
		{name: "H21 fill the workspace", lang: "python",
			code:     "f=open('/workspace/big','wb'); [f.write(b'x'*2**20) for _ in range(10240)]",
			exitCode: 1, reason: "disk_limit", reached: []string{"disk"}, stderrHas: "No space left on device"},
		{name: "H21 fill /tmp", lang: "python",
			code:     "f=open('/tmp/big','wb'); [f.write(b'x'*2**20) for _ in range(10240)]",
			exitCode: 1, reason: "disk_limit", reached: []string{"disk"}, stderrHas: "No space left on device"},
		{name: "node: fill /tmp", lang: "node", limits: map[string]any{"disk_mb": 16},
			code:     "const fs = require('fs');\nfor (let i = 0; ; i++) fs.appendFileSync('/tmp/big', Buffer.alloc(1 << 20));",
			exitCode: 1, reason: "disk_limit", reached: []string{"disk"}, stderrHas: "ENOSPC"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := map[string]any{"language": tc.lang, "code": tc.code}
			if tc.timeoutMS > 0 {
				body["timeout_ms"] = tc.timeoutMS
			}
			if tc.limits != nil {
				body["limits"] = tc.limits
			}
			b, err := json.Marshal(body)
			if err != nil {
				t.Fatal(err)
			}
			resp, raw := e.postRaw(t, b)
			var r trustedRun
			if err := json.Unmarshal(raw, &r); err != nil {
				t.Fatalf("HTTP %d: decoding %s: %v", resp.StatusCode, raw, err)
			}
			t.Logf("reason %s, exit %d, limits reached %q, stdout %.200q, stderr %.300q", r.Reason, r.ExitCode, r.LimitsReached, r.Stdout, r.Stderr)
			if resp.StatusCode != http.StatusOK || r.Reason != tc.reason || r.ExitCode != tc.exitCode {
				t.Errorf("HTTP %d reason %q exit %d, want %q and %d", resp.StatusCode, r.Reason, r.ExitCode, tc.reason, tc.exitCode)
			}
			if !slices.Equal(r.LimitsReached, tc.reached) {
				t.Errorf("limits reached %q, want %q", r.LimitsReached, tc.reached)
			}
			if tc.stdout != "" && r.Stdout != tc.stdout {
				t.Errorf("stdout %q, want %q", r.Stdout, tc.stdout)
			}
			if !strings.Contains(r.Stderr, tc.stderrHas) {
				t.Errorf("stderr %q lacks %q", r.Stderr, tc.stderrHas)
			}
			e.gone(t, r.SandboxID)
		})
	}
	e.healthy(t)
}
