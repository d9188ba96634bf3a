package main

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestE2EHostileSample runs a sample of hostile programs against
// the real server; after each case the server must be healthy and the next
// run must work. TestE2EHostileMore runs the other one-shot cases.
func TestE2EHostileSample(t *testing.T) { onRuntimes(t, testHostileSample) }

func testHostileSample(t *testing.T, e *e2e) {
	// A listener on the host's loopback that sandboxes must not reach.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	hits := make(chan struct{}, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			hits <- struct{}{}
			c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	shadowBefore := fileHash(t, "/etc/shadow")

	tests := []struct {
		id, lang, code string
		timeoutMS      int
		reasons        []string
		stdoutHas      string
		stdoutLacks    string
		stderrHas      string
		maxWall        time.Duration
	}{
		{id: "H01 busy loop", lang: "python", code: "while True: pass", timeoutMS: 5000,
			reasons: []string{"timeout"}, maxWall: 12 * time.Second},
		// The case's literal code grows a list by about 300 MB/s here: with
		// the template's 512 MiB and 10 s it runs out of memory in about
		// 1.7 s and ends oom, the true reason. Under a 0.5 s limit the
		// deadline comes first (at under half the memory, even on a machine
		// twice as fast) and must be reported as timeout. The first gets
		// 30 s, so that memory runs out first on a machine however busy.
		{id: "H03 SIGTERM ignored, growing, memory first", lang: "python", timeoutMS: 30000,
			code:    "import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN); [None for _ in iter(int,1)]",
			reasons: []string{"oom"}, maxWall: 30 * time.Second},
		{id: "H03 SIGTERM ignored, growing, deadline first", lang: "python", timeoutMS: 500,
			code:    "import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN); [None for _ in iter(int,1)]",
			reasons: []string{"timeout"}, maxWall: 8 * time.Second},
		{id: "H03 SIGTERM ignored, spinning", lang: "python", timeoutMS: 2000,
			code:    "import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True: pass",
			reasons: []string{"timeout"}, maxWall: 8 * time.Second},
		{id: "H05 input without stdin", lang: "python", code: "print(input())",
			reasons: []string{"error"}, stderrHas: "EOFError", maxWall: 8 * time.Second},
		{id: "H13 grandchild holds stdout", lang: "python",
			code:    "import subprocess; subprocess.Popen(['sleep','600']); print('done')",
			reasons: []string{"ok"}, stdoutHas: "done", maxWall: 8 * time.Second},
		{id: "H15 signal init and parent", lang: "python", code: "import os; os.kill(1, 9); os.kill(os.getppid(), 9)",
			reasons: []string{"error"}, stderrHas: "PermissionError"},
		// The 10 GB product is mapped lazily under gVisor, so filling it
		// runs the sandbox out of memory rather than failing at once.
		{id: "H19 decompression bomb", lang: "python",
			code:    "import zlib; z=zlib.compress(bytes(10**8)); print(len(zlib.decompress(z)*100))",
			reasons: []string{"oom"}},
		{id: "H21 fill the workspace", lang: "python",
			code:    "f=open('/workspace/big','wb'); [f.write(b'x'*2**20) for _ in range(10240)]",
			reasons: []string{"disk_limit"}, stderrHas: "No space left on device"},
		{id: "H21 fill /tmp", lang: "python",
			code:    "f=open('/tmp/big','wb'); [f.write(b'x'*2**20) for _ in range(10240)]",
			reasons: []string{"disk_limit"}, stderrHas: "No space left on device"},
		{id: "H25 output flood", lang: "python", code: "[print('A'*100) for _ in iter(int,1)]",
			reasons: []string{"output_limit"}},
		{id: "H23 trojan the runtime", lang: "python",
			code:    "import os\np=os.path.dirname(os.__file__)+'/json/__init__.py'\ntry:\n open(p,'a').write('x')\n print('WROTE')\nexcept OSError as e: print(type(e).__name__)",
			reasons: []string{"ok"}, stdoutHas: "PermissionError", stdoutLacks: "WROTE"},
		{id: "H31 host files", lang: "python",
			code:    "for p in ['/etc/shadow', '/etc/sbx-canary-paddock']:\n try: open(p).read(); print('READ', p)\n except Exception as e: print(p, type(e).__name__)",
			reasons: []string{"ok"}, stdoutHas: "/etc/shadow PermissionError", stdoutLacks: "READ"},
		{id: "H37 overwrite the agent", lang: "python",
			code:    "import sys\nfor p in ['/proc/self/exe', sys.executable, '/opt/paddock/paddock-agent']:\n try: open(p,'r+b').write(b'\\x00'); print('WROTE',p)\n except Exception as e: print(p,type(e).__name__)",
			reasons: []string{"ok"}, stdoutLacks: "WROTE"},
		{id: "H39 devices", lang: "python",
			code:    "for p in ['/dev/mem','/dev/kmem','/dev/kmsg','/dev/sda','/dev/kvm','/dev/fuse','/dev/net/tun']:\n try: open(p,'rb').read(1); print('OPEN',p)\n except Exception as e: print(p,type(e).__name__)\nopen('/dev/urandom','rb').read(1); print('urandom ok')",
			reasons: []string{"ok"}, stdoutHas: "urandom ok", stdoutLacks: "OPEN"},
		{id: "H41 host loopback", lang: "python",
			code:    "import socket\ntry:\n socket.create_connection(('127.0.0.1', " + port + "), 2); print('CONNECTED')\nexcept OSError as e: print(type(e).__name__)",
			reasons: []string{"ok"}, stdoutLacks: "CONNECTED"},
		{id: "H43 dns and raw sockets", lang: "python",
			code:    "import socket\ntry: socket.getaddrinfo('exfil.sbx.invalid', 80); print('RESOLVED')\nexcept OSError as e: print('dns', type(e).__name__)\ntry: socket.socket(socket.AF_PACKET, socket.SOCK_RAW); print('RAW')\nexcept OSError as e: print('raw', type(e).__name__)",
			reasons: []string{"ok"}, stdoutHas: "dns", stdoutLacks: "RAW"},
		{id: "H47 node prototype env", lang: "node", code: "console.log(Object.keys(this.constructor.constructor('return process')().env).sort().join(','))",
			reasons: []string{"ok"}, stdoutHas: "HOME,LANG,MPLBACKEND,PATH,PYTHONDONTWRITEBYTECODE", stdoutLacks: "PADDOCK"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			body := map[string]any{"language": tt.lang, "code": tt.code}
			if tt.timeoutMS > 0 {
				body["timeout_ms"] = tt.timeoutMS
			}
			code, r := e.postFull(t, body)
			ran := r.execTime()
			t.Logf("HTTP %d reason %s exit %d after running %v; stdout %.120q", code, r.Reason, r.ExitCode, ran.Round(time.Millisecond), r.Stdout)
			if tt.maxWall > 0 && ran > tt.maxWall {
				t.Errorf("ran %v, want at most %v (a safety net: the host's deadline is the timeout plus 2 s of grace)", ran, tt.maxWall)
			}
			if code != http.StatusOK || !slices.Contains(tt.reasons, r.Reason) {
				t.Errorf("HTTP %d reason %q, want one of %v; stdout %.200q stderr %.300q", code, r.Reason, tt.reasons, r.Stdout, r.Stderr)
			}
			if !strings.Contains(r.Stdout, tt.stdoutHas) {
				t.Errorf("stdout %q lacks %q", r.Stdout, tt.stdoutHas)
			}
			if tt.stdoutLacks != "" && strings.Contains(r.Stdout, tt.stdoutLacks) {
				t.Errorf("stdout %q contains %q", r.Stdout, tt.stdoutLacks)
			}
			if !strings.Contains(r.Stderr, tt.stderrHas) {
				t.Errorf("stderr %q lacks %q", r.Stderr, tt.stderrHas)
			}
			e.healthy(t)
		})
	}
	select {
	case <-hits:
		t.Error("a sandbox reached a listener on the host's loopback")
	default:
	}
	if got := fileHash(t, "/etc/shadow"); got != shadowBefore {
		t.Error("/etc/shadow on the host changed")
	}
}

func fileHash(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}
