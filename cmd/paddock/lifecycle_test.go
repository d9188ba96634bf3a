package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/pool"
)

// The server's lifecycle around runs in flight.

// listedSandbox is one entry of `runsc list --format=json`.
type listedSandbox struct {
	ID          string            `json:"id"`
	Status      string            `json:"status"`
	Annotations map[string]string `json:"annotations"`
}

// listSandboxes returns what runsc knows under the state directory's root.
func listSandboxes(t *testing.T, runscPath, state string) []listedSandbox {
	t.Helper()
	out, err := exec.Command(runscPath, "--root="+filepath.Join(state, "runsc"), "list", "--format=json").Output()
	if err != nil {
		t.Fatalf("runsc list: %v", err)
	}
	var l []listedSandbox
	if err := json.Unmarshal(out, &l); err != nil {
		t.Fatalf("decoding runsc list %q: %v", out, err)
	}
	return l
}

func idsOf(l []listedSandbox, template string) []string {
	var ids []string
	for _, s := range l {
		if template == "" || s.Annotations["dev.paddock.template"] == template {
			ids = append(ids, s.ID)
		}
	}
	return ids
}

// TestE2EClientDisconnectCancelsRun is H49 (a): a client that drops its
// connection during a long run gets its run cancelled and its sandbox
// destroyed at once, long before the run's own timeout.
func TestE2EClientDisconnectCancelsRun(t *testing.T) {
	e := newE2E(t)
	// The run will take the one ready python sandbox.
	var victim string
	deadline := time.Now().Add(30 * time.Second)
	for {
		ids := idsOf(listSandboxes(t, e.runsc, e.cfg.StateDir), "python")
		if s := pythonStats(e); len(ids) == 1 && s.Ready == 1 && s.Starting == 0 && s.InUse == 0 {
			victim = ids[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the python pool did not settle: %+v", e.st.Pool.Stats())
		}
		time.Sleep(50 * time.Millisecond)
	}

	conn, err := net.Dial("tcp", e.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	body := `{"language":"python","code":"import time; time.sleep(60)","timeout_ms":30000}`
	if _, err := fmt.Fprintf(conn, "POST /v1/run HTTP/1.1\r\nHost: paddock\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if s := pythonStats(e); s.InUse != 1 {
		t.Fatalf("1 s into the run the python pool has %d in use, want 1: %+v", s.InUse, s)
	}
	if !slices.Contains(e.list(t), victim) {
		t.Fatalf("sandbox %s gone before the client left", victim)
	}
	conn.Close()
	dropped := time.Now()

	for slices.Contains(e.list(t), victim) {
		if time.Since(dropped) > 5*time.Second {
			t.Fatalf("sandbox %s still listed 5s after the client left", victim)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("sandbox destroyed %v after the client left", time.Since(dropped).Round(time.Millisecond))
	e.gone(t, victim)
	if s := pythonStats(e); s.InUse != 0 {
		t.Errorf("python pool has %d in use after the cancelled run, want 0", s.InUse)
	}
	e.healthy(t)
}

func pythonStats(e *e2e) pool.Stats {
	for _, s := range e.st.Pool.Stats() {
		if s.Template == "python" {
			return s
		}
	}
	return pool.Stats{}
}

// paddockProc is `paddock serve` running as a child process.
type paddockProc struct {
	t     *testing.T
	cmd   *exec.Cmd
	url   string
	state string
	runsc string
	logs  *syncBuffer
	done  chan struct{} // closed when the process has exited
	err   error         // its exit status, once done is closed
}

// syncBuffer collects a child's output for several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serverBinary returns the paddock binary to run: $PADDOCK_SERVER_BIN, or
// one built from this package now.
func serverBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("PADDOCK_SERVER_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "paddock")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building paddock: %v\n%s", err, out)
	}
	return bin
}

// lifecycleEnv returns runsc, the agent and the cache, skipping (or
// failing under `make test`) when they are not configured.
func lifecycleEnv(t *testing.T) (runscPath, agent, cache string) {
	t.Helper()
	runscPath, agent, cache = os.Getenv("PADDOCK_RUNSC"), os.Getenv("PADDOCK_AGENT"), os.Getenv("PADDOCK_CACHE")
	if runscPath == "" || agent == "" || cache == "" {
		if os.Getenv("PADDOCK_REQUIRE_GVISOR") == "1" {
			t.Fatal("PADDOCK_RUNSC, PADDOCK_AGENT and PADDOCK_CACHE must be set (make test sets them)")
		}
		t.Skip("real gVisor not configured: run via `make test`")
	}
	return runscPath, agent, cache
}

// newStateDir returns a fresh state directory that is reaped and removed
// when the test ends, whatever state the servers left it in.
func newStateDir(t *testing.T, runscPath string) string {
	t.Helper()
	state, err := os.MkdirTemp("", "pdl-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		root := filepath.Join(state, "runsc")
		if out, err := exec.Command(runscPath, "--root="+root, "list", "--quiet").Output(); err == nil {
			for _, id := range strings.Fields(string(out)) {
				_ = exec.Command(runscPath, "--root="+root, "delete", "--force", id).Run()
			}
		}
		for range 64 {
			if syscall.Unmount(filepath.Join(root, "null-netns"), syscall.MNT_DETACH) != nil {
				break
			}
		}
		_ = os.RemoveAll(state)
	})
	return state
}

// startServer runs `paddock serve` on a free loopback port over state and
// waits until it is ready.
func startServer(t *testing.T, bin, state string) *paddockProc {
	t.Helper()
	runscPath, agent, cache := lifecycleEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s := &paddockProc{t: t, url: "http://" + addr, state: state, runsc: runscPath, logs: &syncBuffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(bin, "serve", "--listen="+addr, "--runsc="+runscPath, "--agent="+agent, "--cache-dir="+cache,
		"--state-dir="+state, "--build-rootfs=false", "--pool-size=1", "--tenant-rate=0", "--tenant-max-runs=16")
	s.cmd.Stdout, s.cmd.Stderr = s.logs, s.logs
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		select {
		case <-s.done:
		default:
			_ = s.cmd.Process.Kill()
			<-s.done
		}
		if t.Failed() {
			t.Logf("server log:\n%s", s.logs.String())
		}
	})
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := http.Get(s.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case <-s.done:
			t.Fatalf("server exited before it was ready: %v\n%s", s.err, s.logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not ready after 2 minutes:\n%s", s.logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// wait waits for the process to exit and returns its exit status.
func (s *paddockProc) wait(d time.Duration) error {
	select {
	case <-s.done:
		return s.err
	case <-time.After(d):
		return fmt.Errorf("still running after %v", d)
	}
}

// inFlight is one run sent to a server and its outcome.
type inFlight struct {
	status int
	resp   runResp
	err    error
	at     time.Time // when the answer (or error) came
}

// fire sends n runs of code at once and returns a channel that yields
// their outcomes.
func fire(s *paddockProc, n int, code string, timeoutMS int) <-chan inFlight {
	out := make(chan inFlight, n)
	body, _ := json.Marshal(map[string]any{"language": "python", "code": code, "timeout_ms": timeoutMS})
	client := &http.Client{Timeout: 2 * time.Minute}
	for range n {
		go func() {
			var f inFlight
			resp, err := client.Post(s.url+"/v1/run", "application/json", bytes.NewReader(body))
			if err != nil {
				f.err, f.at = err, time.Now()
				out <- f
				return
			}
			defer resp.Body.Close()
			raw, err := io.ReadAll(resp.Body)
			f.status, f.err, f.at = resp.StatusCode, err, time.Now()
			if err == nil && resp.StatusCode == http.StatusOK {
				f.err = json.Unmarshal(raw, &f.resp)
			} else if err == nil {
				f.err = fmt.Errorf("HTTP %d: %s", resp.StatusCode, raw)
			}
			out <- f
		}()
	}
	return out
}

// awaitSandboxes waits until runsc lists at least n python sandboxes of
// the server and returns them.
func (s *paddockProc) awaitSandboxes(n int) []string {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ids := idsOf(listSandboxes(s.t, s.runsc, s.state), "python")
		if len(ids) >= n {
			return ids
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("runsc lists %d python sandboxes after 30s, want %d", len(ids), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestE2EGracefulShutdown is H49 (b): SIGTERM with five runs in flight.
// The server stops accepting, lets the runs finish and answers them, then
// destroys every sandbox and exits 0.
func TestE2EGracefulShutdown(t *testing.T) {
	runscPath, _, _ := lifecycleEnv(t)
	bin := serverBinary(t)
	state := newStateDir(t, runscPath)
	s := startServer(t, bin, state)

	const n = 5
	start := time.Now()
	results := fire(s, n, "import time; time.sleep(2); print('done')", 10000)
	// Every run holds a sandbox: one came ready, the others cold.
	s.awaitSandboxes(n)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	signalled := time.Now()
	t.Logf("SIGTERM %v after the runs were sent", signalled.Sub(start).Round(time.Millisecond))

	// It stops accepting at once, while the runs are still going.
	time.Sleep(200 * time.Millisecond)
	if resp, err := http.Get(s.url + "/healthz"); err == nil {
		resp.Body.Close()
		t.Errorf("a new request after SIGTERM was served: HTTP %d", resp.StatusCode)
	}

	for range n {
		r := <-results
		switch {
		case r.err != nil:
			t.Errorf("run failed: %v", r.err)
		case r.status != http.StatusOK || r.resp.Reason != "ok" || r.resp.Stdout != "done\n":
			t.Errorf("run: HTTP %d %+v, want ok done", r.status, r.resp)
		case r.at.Before(signalled):
			t.Errorf("a run answered %v before SIGTERM: it was not in flight", signalled.Sub(r.at))
		}
	}
	if err := s.wait(time.Minute); err != nil {
		t.Fatalf("server exit: %v\n%s", err, s.logs.String())
	}
	t.Logf("exited 0 %v after SIGTERM", time.Since(signalled).Round(time.Millisecond))
	if l := listSandboxes(t, runscPath, state); len(l) != 0 {
		t.Errorf("sandboxes left after shutdown: %+v", l)
	}
	if !strings.Contains(s.logs.String(), "shutting down: draining in-flight runs") {
		t.Errorf("the log does not say it drained:\n%s", s.logs.String())
	}
	// Nothing of the server stays mounted under its state directory.
	if err := os.RemoveAll(state); err != nil {
		t.Errorf("removing the state directory after shutdown: %v", err)
	}
}

// TestE2ECrashRecovery is H49 (c): SIGKILL with five runs in flight, then
// a new server on the same state directory reaps the orphans at boot.
func TestE2ECrashRecovery(t *testing.T) {
	runscPath, _, _ := lifecycleEnv(t)
	bin := serverBinary(t)
	state := newStateDir(t, runscPath)
	first := startServer(t, bin, state)

	const n = 5
	results := fire(first, n, "import time; time.sleep(30)", 60000)
	first.awaitSandboxes(n)
	time.Sleep(300 * time.Millisecond) // the runs' code is running
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := first.wait(10 * time.Second); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("first server exit: %v, want killed", err)
	}
	for range n {
		if r := <-results; r.err == nil {
			t.Errorf("a run of the killed server answered: HTTP %d %+v", r.status, r.resp)
		}
	}
	orphans := listSandboxes(t, runscPath, state)
	old := idsOf(orphans, "")
	t.Logf("after SIGKILL runsc lists %d sandboxes: %+v", len(old), orphans)
	if len(idsOf(orphans, "python")) < n {
		t.Fatalf("runsc lists %d python sandboxes after the crash, want at least the %d in flight", len(idsOf(orphans, "python")), n)
	}

	second := startServer(t, bin, state)
	now := idsOf(listSandboxes(t, runscPath, state), "")
	for _, id := range old {
		if slices.Contains(now, id) {
			t.Errorf("orphan %s still listed after the restart was ready", id)
		}
		if cgs := hostCgroups(id); len(cgs) > 0 {
			t.Errorf("orphan %s left cgroups: %v", id, cgs)
		}
		if pids := hostProcessesNaming(id); len(pids) > 0 {
			t.Errorf("orphan %s left host processes: %v", id, pids)
		}
		if _, err := os.Stat(filepath.Join(state, "bundles", id)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("orphan %s left its bundle (stat: %v)", id, err)
		}
	}
	// A start or restore the dead server had begun may still have finished
	// after the listing above, so the restart can reap more than it shows.
	m := regexp.MustCompile(`msg="reaped orphan sandboxes from an earlier run" count=(\d+)`).FindStringSubmatch(second.logs.String())
	if m == nil {
		t.Errorf("the restarted server's log does not say it reaped orphans:\n%s", second.logs.String())
	} else if reaped, _ := strconv.Atoi(m[1]); reaped < len(old) {
		t.Errorf("the restarted server reaped %d orphans, want at least the %d listed", reaped, len(old))
	}

	// The restarted server works, and shuts down clean.
	results = fire(second, 1, "print(1)", 5000)
	if r := <-results; r.err != nil || r.resp.Reason != "ok" || r.resp.Stdout != "1\n" {
		t.Errorf("run on the restarted server: %+v %v", r.resp, r.err)
	}
	if err := second.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := second.wait(time.Minute); err != nil {
		t.Fatalf("restarted server exit: %v", err)
	}
	if l := listSandboxes(t, runscPath, state); len(l) != 0 {
		t.Errorf("sandboxes left after shutdown: %+v", l)
	}
}
