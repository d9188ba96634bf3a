package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// e2e is the whole server on real gVisor behind an httptest listener.
type e2e struct {
	srv   *httptest.Server
	st    *stack
	cfg   *config
	runsc string
}

func newE2E(t *testing.T) *e2e {
	t.Helper()
	return newE2EWith(t)
}

// newE2EWith is newE2E with more serve flags, which override the defaults.
func newE2EWith(t *testing.T, flags ...string) *e2e {
	t.Helper()
	e := startE2E(t, buildStack, flags...)
	deadline := time.Now().Add(2 * time.Minute)
	for !e.st.Pool.Ready() {
		if time.Now().After(deadline) {
			t.Fatal("pools not ready after 2 minutes")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return e
}

// startE2E serves the stack build makes from the end-to-end tests' flags
// and flags, without waiting for its pools.
func startE2E(t *testing.T, build func(context.Context, *config, *slog.Logger) (*stack, error), flags ...string) *e2e {
	t.Helper()
	runscPath, agent, cache := os.Getenv("PADDOCK_RUNSC"), os.Getenv("PADDOCK_AGENT"), os.Getenv("PADDOCK_CACHE")
	if runscPath == "" || agent == "" || cache == "" {
		if os.Getenv("PADDOCK_REQUIRE_GVISOR") == "1" {
			t.Fatal("PADDOCK_RUNSC, PADDOCK_AGENT and PADDOCK_CACHE must be set (make test sets them)")
		}
		t.Skip("real gVisor not configured: run via `make test`")
	}
	state, err := os.MkdirTemp("", "pde-")
	if err != nil {
		t.Fatal(err)
	}
	// The end-to-end tests serve node and python, the pandas-ready
	// template, unless they ask for more: python-slim's tests
	// (slim_e2e_test.go) add it, so no other test pays for its pool.
	cfg, _, err := parse("serve", append([]string{"--runsc=" + runscPath, "--agent=" + agent, "--cache-dir=" + cache,
		"--state-dir=" + state, "--build-rootfs=false", "--templates=node,python", "--pool-size=1", "--max-timeout=30s", "--pool-max=1", "--tenant-rate=0", "--tenant-max-runs=16", "--tenant-max-sessions=16",
		// Tests that are not about saturation wait for their sandboxes
		// however loaded the machine is.
		"--queue-deadline=2m"}, flags...))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	st, err := build(t.Context(), cfg, logger)
	if err != nil {
		t.Fatal(err)
	}
	e := &e2e{srv: httptest.NewServer(st.Handler), st: st, cfg: cfg, runsc: runscPath}
	t.Cleanup(func() {
		e.srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := st.Close(ctx); err != nil {
			t.Errorf("closing: %v", err)
		}
		if ids := e.list(t); len(ids) > 0 {
			t.Errorf("sandboxes left after close: %v", ids)
		}
		_ = os.RemoveAll(state)
	})
	return e
}

func (e *e2e) list(t *testing.T) []string {
	t.Helper()
	if e.cfg.Runtime == "runc" {
		return runcContainers(t, e.cfg.StateDir)
	}
	out, err := exec.Command(e.runsc, "--root="+e.cfg.StateDir+"/runsc", "list", "--quiet").Output()
	if err != nil {
		t.Fatalf("runsc list: %v", err)
	}
	return strings.Fields(string(out))
}

type runResp struct {
	Stdout          string `json:"stdout"`
	Stderr          string `json:"stderr"`
	ExitCode        int    `json:"exit_code"`
	Reason          string `json:"reason"`
	StdoutTruncated bool   `json:"stdout_truncated"`
	Warm            bool   `json:"warm"`
	SandboxID       string `json:"sandbox_id"`
}

func (e *e2e) post(t *testing.T, body any) (int, runResp) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(e.srv.URL+"/v1/run", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var r runResp
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatalf("decoding %s: %v", raw, err)
		}
	}
	return resp.StatusCode, r
}

func (e *e2e) healthy(t *testing.T) {
	t.Helper()
	resp, err := http.Get(e.srv.URL + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	resp.Body.Close()
	code, r := e.post(t, map[string]any{"language": "python", "code": "print(1)"})
	if code != http.StatusOK || r.Stdout != "1\n" {
		t.Fatalf("follow-up print(1): HTTP %d %+v", code, r)
	}
}

func TestE2EHello(t *testing.T) {
	e := newE2E(t)
	for _, tc := range []struct{ lang, code string }{
		{"python", "print(6*7)"},
		{"node", "console.log(6*7)"},
	} {
		code, r := e.post(t, map[string]any{"language": tc.lang, "code": tc.code})
		if code != http.StatusOK || r.Stdout != "42\n" || r.Reason != "ok" || !r.Warm {
			t.Errorf("%s: HTTP %d %+v, want 42 ok warm", tc.lang, code, r)
		}
	}
}

func TestE2ERunsAreIsolatedAndSandboxesGone(t *testing.T) {
	e := newE2E(t)
	_, first := e.post(t, map[string]any{"language": "python", "code": "import subprocess\n" +
		"subprocess.Popen(['sleep', '300'])\nopen('/tmp/marker', 'w').write('x')\nopen('/workspace/marker', 'w').write('x')\nprint('started')"})
	if first.Reason != "ok" || first.Stdout != "started\n" {
		t.Fatalf("first run: %+v", first)
	}
	_, second := e.post(t, map[string]any{"language": "python", "code": "import os\n" +
		"procs = [open(f'/proc/{p}/cmdline').read() for p in os.listdir('/proc') if p.isdigit()]\n" +
		"print(any('sleep' in c for c in procs), os.path.exists('/tmp/marker'), os.path.exists('/workspace/marker'))"})
	if second.Stdout != "False False False\n" {
		t.Fatalf("second run saw the first one's leftovers: %+v", second)
	}
	if second.SandboxID == first.SandboxID {
		t.Fatalf("both runs used sandbox %s", first.SandboxID)
	}
	// Destruction happens off the request path: poll for it.
	deadline := time.Now().Add(2 * time.Minute) // a safety net only
	for slices.Contains(e.list(t), first.SandboxID) {
		if time.Now().After(deadline) {
			t.Fatalf("sandbox %s of a finished run still listed", first.SandboxID)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestE2EHostileStaysContained(t *testing.T) { onRuntimes(t, testHostileStaysContained) }

func testHostileStaysContained(t *testing.T, e *e2e) {
	tests := []struct {
		name, lang, code string
		timeoutMS        int
		wantReasons      []string
	}{
		// The bombs end as H07 and H09 in hostile_more_test.go do, which
		// say why each has two honest reasons.
		{"fork bomb", "python", "import os\nwhile True:\n  os.fork()", 5000, []string{"oom", "pids_limit"}},
		// On runc, where the refusals often read error (see H07).
		{"fork bomb on runc", "python", "import os\nwhile True:\n  os.fork()", 5000, []string{"pids_limit", "error"}},
		{"node spawn bomb", "node", "const cp=require('child_process');for(;;){try{cp.spawn(process.execPath,['-e','setInterval(()=>{},1e9)'],{detached:true,stdio:'ignore'}).unref()}catch(e){}}", 5000, []string{"pids_limit", "timeout"}},
		{"kill init", "python", "import os\ntry:\n  os.kill(1, 9)\nexcept OSError as e: print(type(e).__name__)", 5000, []string{"ok"}},
		{"off-heap memory", "node", "const a=[];for(;;)a.push(Buffer.alloc(1<<24,1))", 10000, []string{"oom"}},
	}
	for _, tt := range tests {
		onRuncOnly := strings.HasSuffix(tt.name, " on runc")
		if onRuncOnly != e.onRunc() && (onRuncOnly || tt.name == "fork bomb") {
			continue // the fork bomb has its own reasons on runc
		}
		t.Run(tt.name, func(t *testing.T) {
			code, r := e.post(t, map[string]any{"language": tt.lang, "code": tt.code, "timeout_ms": tt.timeoutMS})
			if code != http.StatusOK || !slices.Contains(tt.wantReasons, r.Reason) {
				t.Errorf("HTTP %d reason %q (stderr %.300q), want one of %v", code, r.Reason, r.Stderr, tt.wantReasons)
			}
			e.healthy(t)
		})
	}
}
