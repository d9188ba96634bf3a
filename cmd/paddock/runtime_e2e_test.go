package main

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
)

// TestE2ERuntimes serves runs, sessions and their files on each runtime
// with the pools and kernels unchanged, and checks that every answer names
// the runtime that served it and that /v1/templates says what it is.
func TestE2ERuntimes(t *testing.T) {
	onRuntimes(t, func(t *testing.T, e *e2e) {
		rt := e.cfg.Runtime
		code, raw := e.do(t, "POST", "/v1/run", map[string]any{"language": "python", "code": "print(6*7)"}, "")
		var run struct {
			Stdout, Runtime string
			Warm            bool
		}
		if err := json.Unmarshal(raw, &run); code != http.StatusOK || err != nil || run.Stdout != "42\n" || !run.Warm || run.Runtime != rt {
			t.Errorf("run: HTTP %d %s, want 42 from a warm sandbox on %s", code, raw, rt)
		}

		_, raw = e.do(t, "GET", "/v1/templates", nil, "")
		var list struct {
			Templates []struct {
				Name        string `json:"name"`
				Runtime     string `json:"runtime"`
				RuntimeNote string `json:"runtime_note"`
			} `json:"templates"`
		}
		if err := json.Unmarshal(raw, &list); err != nil || len(list.Templates) == 0 {
			t.Fatalf("templates: %s", raw)
		}
		for _, tm := range list.Templates {
			wantNote := "a kernel of its own"
			if rt == "runc" {
				wantNote = "sharing the host's kernel"
			}
			if tm.Runtime != rt || !strings.Contains(tm.RuntimeNote, wantNote) || (rt == "runc" && !strings.Contains(tm.RuntimeNote, "For trusted code only")) {
				t.Errorf("template %s: runtime %q note %q, want %s and a note saying %q", tm.Name, tm.Runtime, tm.RuntimeNote, rt, wantNote)
			}
		}

		for _, lang := range []string{"python", "node"} {
			code, raw := e.do(t, "POST", "/v1/sessions", map[string]any{"language": lang}, "")
			var s struct{ ID, Runtime string }
			if err := json.Unmarshal(raw, &s); code != http.StatusCreated || err != nil || s.Runtime != rt {
				t.Fatalf("%s session: HTTP %d %s, want one on %s", lang, code, raw, rt)
			}
			set, use := "x = 41", "print(x + 1)"
			if lang == "node" {
				set, use = "var x = 41", "console.log(x + 1)"
			}
			e.exec(t, s.ID, set)
			if r := e.exec(t, s.ID, use); r.Stdout != "42\n" {
				t.Errorf("%s session: %+v, want 42", lang, r)
			}
			if code, raw := e.sendRaw(t, "PUT", "/v1/sessions/"+s.ID+"/files?path=a.txt", []byte("hello")); code/100 != 2 {
				t.Errorf("%s session: writing a file: HTTP %d %s", lang, code, raw)
			}
			if code, raw := e.do(t, "GET", "/v1/sessions/"+s.ID+"/files?path=a.txt", nil, ""); code != http.StatusOK || string(raw) != "hello" {
				t.Errorf("%s session: reading the file: HTTP %d %q", lang, code, raw)
			}
			if code, _ := e.do(t, "DELETE", "/v1/sessions/"+s.ID, nil, ""); code/100 != 2 {
				t.Errorf("%s session: delete: HTTP %d", lang, code)
			}
		}
	})
}

// kernelProbe asks, from inside a sandbox, which kernel answers: its
// version string, and whether a few host-kernel interfaces that have had
// privilege-escalation bugs can be reached from user code at all.
const kernelProbe = `import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
print(open('/proc/version').read().strip())
def call(name, *args):
    r = libc.syscall(*args)
    print(name, 'reached' if r >= 0 else os.strerror(ctypes.get_errno()))
p = ctypes.create_string_buffer(120)
call('io_uring_setup', 425, 1, p)
call('keyctl', 250, 0, -3, 0)
call('unshare(CLONE_NEWUSER)', 272, 0x10000000)
`

// TestE2EKernelSurface records what user code reaches of the kernel on
// each runtime. On gVisor the kernel answering is the Sentry, never the
// host's; on runc it is the host's own: the hostile cases that aim at the
// kernel (the table in docs/runtimes.md) only gVisor
// contains.
func TestE2EKernelSurface(t *testing.T) {
	host, err := os.ReadFile("/proc/version")
	if err != nil {
		t.Fatal(err)
	}
	onRuntimes(t, func(t *testing.T, e *e2e) {
		code, r := e.postFull(t, map[string]any{"language": "python", "code": kernelProbe})
		if code != http.StatusOK || r.Reason != "ok" {
			t.Fatalf("HTTP %d reason %s stderr %.300q", code, r.Reason, r.Stderr)
		}
		t.Logf("on %s:\n%s", e.cfg.Runtime, r.Stdout)
		first, _, _ := strings.Cut(r.Stdout, "\n")
		shared := first == strings.TrimSpace(string(host))
		if want := e.onRunc(); shared != want {
			t.Errorf("the sandbox's kernel is the host's: %v, want %v on %s (%q)", shared, want, e.cfg.Runtime, first)
		}
	})
}
