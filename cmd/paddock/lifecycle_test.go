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
// destroyed, long before the run's own timeout.
func TestE2EClientDisconnectCancelsRun(t *testing.T) {
	e := newE2EWith(t, "--max-timeout=60s")
	conn, err := net.Dial("tcp", e.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	// The program waits for a release that never comes: only the cancel
	// or its timeout can end it.
	const timeout = 60 * time.Second
	body, _ := json.Marshal(map[string]any{"language": "python", "code": blockingRun, "timeout_ms": timeout.Milliseconds()})
	sent := time.Now()
	if _, err := fmt.Fprintf(conn, "POST /v1/run HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		t.Fatal(err)
	}
	victim := awaitInFlight(t, e.runsc, e.cfg.StateDir, 1)[0]
	if s := statsOf(e, "python"); s.InUse != 1 {
		t.Fatalf("with the run's code running the python pool has %d in use, want 1: %+v", s.InUse, s)
	}
	conn.Close()
	dropped := time.Now()

	for slices.Contains(e.list(t), victim) {
		// The timeout starts after the request was sent, so a sandbox gone
		// before sent+timeout was destroyed by the cancel.
		if time.Since(sent) > timeout {
			t.Fatalf("sandbox %s still listed %v after the client left: the run's own timeout came first", victim, time.Since(dropped).Round(time.Millisecond))
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("sandbox destroyed %v after the client left", time.Since(dropped).Round(time.Millisecond))
	e.gone(t, victim)
	if s := statsOf(e, "python"); s.InUse != 0 {
		t.Errorf("python pool has %d in use after the cancelled run, want 0", s.InUse)
	}
	e.healthy(t)
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
func startServer(t *testing.T, bin, state string, flags ...string) *paddockProc {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return startServerAt(t, bin, state, addr, flags...)
}

// startServerAt is startServer listening on addr: a server started again
// where clients (a gateway's --nodes) already look for it.
func startServerAt(t *testing.T, bin, state, addr string, flags ...string) *paddockProc {
	t.Helper()
	runscPath, agent, cache := lifecycleEnv(t)
	s := &paddockProc{t: t, url: "http://" + addr, state: state, runsc: runscPath, logs: &syncBuffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(bin, "serve", "--listen="+addr, "--runsc="+runscPath, "--agent="+agent, "--cache-dir="+cache,
		"--state-dir="+state, "--build-rootfs=false", "--templates=node,python", "--pool-size=1", "--tenant-rate=0", "--tenant-max-runs=16",
		"--queue-deadline=2m") // not about saturation: waits however loaded the machine is
	s.cmd.Args = append(s.cmd.Args, flags...)
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

// blockingRun is a program that marks itself in flight and then waits,
// without a deadline of its own, until the test releases it: it takes
// SIGUSR1 as its release, then renames its process inFlightName (what
// `runsc ps` shows), so a process of that name is one ready for it, and
// waits for the signal (see releaseRuns). Nothing the host writes shows
// up inside a sandbox: its root filesystem and agent directory are
// read-only images.
const (
	inFlightName = "pd-inflight"
	blockingRun  = "import signal, time\n" +
		"released = []\n" +
		"signal.signal(signal.SIGUSR1, lambda *_: released.append(1))\n" +
		"with open('/proc/self/comm', 'w') as f: f.write('" + inFlightName + "')\n" +
		"while not released:\n" +
		"    time.sleep(0.02)\n" +
		"print('done')"
)

// releaseRuns lets the blockingRun in each of the sandboxes ids of the
// server over state finish, by sending it SIGUSR1 with `runsc kill`.
func releaseRuns(t *testing.T, runscPath, state string, ids []string) {
	t.Helper()
	for _, id := range ids {
		pid := inFlightPID(t, runscPath, state, id)
		out, err := exec.Command(runscPath, "--root="+filepath.Join(state, "runsc"), "kill", "--pid="+pid, id, "USR1").CombinedOutput()
		if err != nil {
			t.Fatalf("runsc kill --pid=%s %s USR1: %v\n%s", pid, id, err, out)
		}
	}
}

// inFlightPID is the sandbox PID of sandbox id's process named
// inFlightName (PID is the second column of `runsc ps`).
func inFlightPID(t *testing.T, runscPath, state, id string) string {
	t.Helper()
	rows := psRows(runscPath, state, id)
	for _, f := range rows {
		if len(f) > 2 && f[len(f)-1] == inFlightName {
			return f[1]
		}
	}
	t.Fatalf("no %s process in sandbox %s: %v", inFlightName, id, rows)
	return ""
}

// psRows returns the rows of `runsc ps` for sandbox id, split into
// columns, or nil when runsc no longer knows it.
func psRows(runscPath, state, id string) [][]string {
	out, err := exec.Command(runscPath, "--root="+filepath.Join(state, "runsc"), "ps", id).Output()
	if err != nil {
		return nil
	}
	var rows [][]string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n")[1:] {
		if f := strings.Fields(l); len(f) > 0 {
			rows = append(rows, f)
		}
	}
	return rows
}

// processNames returns the command names `runsc ps` shows in sandbox id
// (the last column of its table), or nil when runsc no longer knows it.
func processNames(runscPath, state, id string) []string {
	var names []string
	for _, f := range psRows(runscPath, state, id) {
		names = append(names, f[len(f)-1])
	}
	return names
}

// awaitInFlight waits until n python sandboxes under state are running a
// blockingRun's code and returns them. It waits for that event, however
// long the sandboxes take to start; the bound only ends a test whose runs
// never got there.
func awaitInFlight(t *testing.T, runscPath, state string, n int) []string {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		var running []string
		for _, id := range idsOf(listSandboxes(t, runscPath, state), "python") {
			if slices.Contains(processNames(runscPath, state, id), inFlightName) {
				running = append(running, id)
			}
		}
		if len(running) >= n {
			return running
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d python sandboxes run the test's code after 3 minutes, want %d (safety net: a start takes seconds)", len(running), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestE2EGracefulShutdown is H49 (b): SIGTERM with five runs in flight.
// The server stops accepting, lets the runs finish and answers them, then
// destroys every sandbox and exits 0. The runs cannot end before the test
// releases them, and the test signals only once all five run their code,
// so the signal lands with five in flight whatever the machine's speed.
func TestE2EGracefulShutdown(t *testing.T) {
	runscPath, _, _ := lifecycleEnv(t)
	bin := serverBinary(t)
	state := newStateDir(t, runscPath)
	s := startServer(t, bin, state)

	const n = 5
	// The run's timeout is only a safety net: the test releases the runs.
	results := fire(s, n, blockingRun, 60000)
	running := awaitInFlight(t, runscPath, state, n)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	signalled := time.Now()

	// It refuses new work while the runs are still going (503 draining,
	// the listener still open so that no request meets a closing
	// connection): they wait for the release, which comes only after the
	// server refused a run. The probe is a run the server refuses 400 when
	// it is not draining, so that a probe sent before the signal lands
	// starts nothing.
	refused := time.Now().Add(time.Minute)
	for {
		resp, err := http.Post(s.url+"/v1/run", "application/json", strings.NewReader(`{"language":"python"}`))
		if err != nil {
			t.Fatalf("a run while the server drains: %v, want 503 draining", err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(string(b), `"code":"draining"`) && resp.Header.Get("Retry-After") != "" {
			break
		}
		if time.Now().After(refused) {
			t.Fatalf("the server still serves new requests a minute after SIGTERM: HTTP %d %s", resp.StatusCode, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case r := <-results:
		t.Fatalf("a run answered before its release: HTTP %d %+v %v", r.status, r.resp, r.err)
	default:
	}
	for _, id := range running {
		if !slices.Contains(processNames(runscPath, state, id), inFlightName) {
			t.Fatalf("sandbox %s no longer runs the test's code before its release: %v", id, processNames(runscPath, state, id))
		}
	}
	releaseRuns(t, runscPath, state, running)

	var ids []string
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
		ids = append(ids, r.resp.SandboxID)
	}
	slices.Sort(ids)
	slices.Sort(running)
	if !slices.Equal(ids, running) {
		t.Errorf("the runs answered from sandboxes %v, want the %v that were in flight at SIGTERM", ids, running)
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
	results := fire(first, n, blockingRun, 60000)
	awaitInFlight(t, runscPath, state, n)
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := first.wait(time.Minute); err == nil || !strings.Contains(err.Error(), "killed") {
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
