package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner/wire"
)

// agentConfigEnv, when set, makes the test binary run as the agent with
// the JSON Config it holds: every integration test drives a real agent
// process, built with the same flags (-race included) as the tests.
const agentConfigEnv = "PADDOCK_AGENT_TEST_CONFIG"

// agentLimitsEnv, when set, holds the limit state, as "tasks nproc free",
// that every limit reading of that agent returns.
const agentLimitsEnv = "PADDOCK_AGENT_TEST_LIMITS"

func TestMain(m *testing.M) {
	if raw := os.Getenv(agentConfigEnv); raw != "" {
		if root := os.Getenv(testRootEnv); root != "" {
			if err := enterTestRoot(root); err != nil {
				fmt.Fprintln(os.Stderr, "entering the template's root filesystem:", err)
				os.Exit(2)
			}
		}
		os.Exit(agentMain(raw))
	}
	os.Exit(m.Run())
}

func agentMain(raw string) int {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var cfg Config
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		log.Error("decoding config", "err", err)
		return 2
	}
	a, err := New(cfg, log)
	if err != nil {
		log.Error("new agent", "err", err)
		return 2
	}
	if raw := os.Getenv(agentLimitsEnv); raw != "" {
		var st limitState
		if _, err := fmt.Sscan(raw, &st.tasks, &st.nproc, &st.free); err != nil {
			log.Error("decoding limits", "err", err)
			return 2
		}
		a.limits = &st
	}
	if err := a.Serve(context.Background(), os.Stdin, os.Stdout); err != nil {
		log.Error("serve", "err", err)
		return 1
	}
	return 0
}

// frameTimeout bounds every wait for a frame, so a broken agent fails the
// test instead of hanging it. It is a safety net, longer than any request
// timeout the tests give (a minute), so that a run or cell the agent fails
// to end early is reported by its own timeout.
const frameTimeout = 2 * time.Minute

// testConfig is a config for an agent that runs code as the test's user
// in a fresh working directory, with the interpreter the agent finds on
// SearchPath in the template's root filesystem (template_root_test.go).
func testConfig(t testing.TB, language string) Config {
	t.Helper()
	templateImage(t, language)
	cfg := Config{Language: language, Workdir: t.TempDir()}
	if language == LanguageNode {
		// As in a sandbox: node starts from its image's startup snapshot.
		cfg.NodeStartupDir = imageStartupDir
	}
	return cfg
}

// lockedBuffer collects the agent's log.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// client is the host side of one agent process.
type client struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	w      *wire.Writer
	frames chan frameOrErr
	log    *lockedBuffer
	waited chan error
	// failing is set by a test that expects the agent to exit non-zero.
	failing bool
}

// startAgent starts an agent process for cfg. Cleanup closes its stdin and
// checks that it exits 0 without a data race.
func startAgent(t testing.TB, cfg Config) *client {
	t.Helper()
	return startAgentWith(t, cfg, nil)
}

// startAgentWith is startAgent with process attributes for the agent (a
// new PID namespace makes it PID 1). The agent runs in its own mount
// namespace, chrooted into its template's root filesystem.
func startAgentWith(t testing.TB, cfg Config, attr *syscall.SysProcAttr) *client {
	t.Helper()
	return startAgentEnv(t, cfg, attr)
}

// startAgentLimits is startAgent with every limit reading returning st.
func startAgentLimits(t testing.TB, cfg Config, st limitState) *client {
	t.Helper()
	return startAgentEnv(t, cfg, nil, fmt.Sprintf("%s=%d %d %d", agentLimitsEnv, st.tasks, st.nproc, st.free))
}

// startAgentEnv is startAgentWith with more environment for the agent.
func startAgentEnv(t testing.TB, cfg Config, attr *syscall.SysProcAttr, env ...string) *client {
	t.Helper()
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	root, err := json.Marshal(newTestRoot(t, cfg))
	if err != nil {
		t.Fatal(err)
	}
	if attr == nil {
		attr = &syscall.SysProcAttr{}
	}
	attr.Cloneflags |= syscall.CLONE_NEWNS
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.SysProcAttr = attr
	cmd.Env = append(os.Environ(),
		agentConfigEnv+"="+string(raw),
		testRootEnv+"="+string(root),
		// The race detector otherwise sleeps a second before every exit.
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"),
	)
	cmd.Env = append(cmd.Env, env...)
	c := &client{t: t, cmd: cmd, log: &lockedBuffer{}, frames: make(chan frameOrErr, 64), waited: make(chan error, 1)}
	cmd.Stderr = c.log
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c.w = wire.NewWriter(c.stdin)
	go func() {
		r := wire.NewReader(stdout)
		for {
			f, err := r.Read()
			c.frames <- frameOrErr{f: f, err: err}
			if err != nil {
				close(c.frames)
				break
			}
		}
		c.waited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		c.stdin.Close()
		go func() {
			for range c.frames {
			}
		}()
		select {
		case err := <-c.waited:
			if (err != nil) != c.failing {
				t.Errorf("agent exited with %v, want failure %v; log:\n%s", err, c.failing, c.log)
			}
		case <-time.After(frameTimeout):
			cmd.Process.Kill()
			t.Errorf("agent did not exit after stdin closed; log:\n%s", c.log)
		}
		if strings.Contains(c.log.String(), "DATA RACE") {
			t.Errorf("data race in the agent:\n%s", c.log)
		}
	})
	return c
}

// next returns the next frame.
func (c *client) next() (wire.Frame, error) {
	select {
	case fe, ok := <-c.frames:
		if !ok {
			return wire.Frame{}, io.EOF
		}
		return fe.f, fe.err
	case <-time.After(frameTimeout):
		return wire.Frame{}, errors.New("no frame in time")
	}
}

// hello reads the agent's first frame, which must be Hello.
func (c *client) hello() wire.Hello {
	c.t.Helper()
	f, err := c.next()
	if err != nil {
		c.t.Fatalf("reading hello: %v; log:\n%s", err, c.log)
	}
	if f.Type != wire.TypeHello {
		c.t.Fatalf("first frame %c %s, want hello; log:\n%s", f.Type, f.Payload, c.log)
	}
	var h wire.Hello
	if err := json.Unmarshal(f.Payload, &h); err != nil {
		c.t.Fatal(err)
	}
	return h
}

// ping sends a ping and waits for its echo.
func (c *client) ping(payload string) {
	c.t.Helper()
	if err := c.w.Write(wire.TypePing, []byte(payload)); err != nil {
		c.t.Fatalf("sending ping: %v", err)
	}
	f, err := c.next()
	if err != nil || f.Type != wire.TypePing || string(f.Payload) != payload {
		c.t.Fatalf("ping answered with %c %q, %v; want the echo; log:\n%s", f.Type, f.Payload, err, c.log)
	}
}

// result is everything the agent sent for one Run frame.
type result struct {
	stdout, stderr []byte
	outputs        []sent // the run's output files, with their content
	exit           *wire.Exit
	fail           *wire.Fail
	elapsed        time.Duration // from sending Run to Exit or Fail
}

// run sends req and collects frames up to Exit or Fail.
func (c *client) run(req wire.Run) result {
	c.t.Helper()
	raw, err := json.Marshal(req)
	if err != nil {
		c.t.Fatal(err)
	}
	start := time.Now()
	if err := c.w.Write(wire.TypeRun, raw); err != nil {
		c.t.Fatalf("sending run: %v", err)
	}
	var res result
	for {
		f, err := c.next()
		if err != nil {
			c.t.Fatalf("reading result: %v; log:\n%s", err, c.log)
		}
		switch f.Type {
		case wire.TypeStdout:
			res.stdout = append(res.stdout, f.Payload...)
		case wire.TypeStderr:
			res.stderr = append(res.stderr, f.Payload...)
		case wire.TypeOutputFile:
			var e wire.OutputFile
			if err := json.Unmarshal(f.Payload, &e); err != nil {
				c.t.Fatal(err)
			}
			res.outputs = append(res.outputs, sent{OutputFile: e})
		case wire.TypeOutputData:
			if len(res.outputs) == 0 {
				c.t.Fatalf("output data before any output file")
			}
			res.outputs[len(res.outputs)-1].content += string(f.Payload)
		case wire.TypeExit:
			res.elapsed = time.Since(start)
			res.exit = new(wire.Exit)
			if err := json.Unmarshal(f.Payload, res.exit); err != nil {
				c.t.Fatal(err)
			}
			return res
		case wire.TypeFail:
			res.elapsed = time.Since(start)
			res.fail = new(wire.Fail)
			if err := json.Unmarshal(f.Payload, res.fail); err != nil {
				c.t.Fatal(err)
			}
			return res
		default:
			c.t.Fatalf("unexpected frame %c during a run", f.Type)
		}
	}
}

// mustExit fails unless res ended with an Exit frame.
func (res result) mustExit(t *testing.T) wire.Exit {
	t.Helper()
	if res.exit == nil {
		t.Fatalf("got fail %+v, want exit; stderr %q", res.fail, res.stderr)
	}
	return *res.exit
}

// touch creates the empty file name in dir: the signal that code under test
// waits for, so that it goes on only after an event the test saw.
func touch(t testing.TB, dir, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitGone waits until pid no longer exists (reaped), or fails.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a safety net only
	for {
		_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
		if errors.Is(err, os.ErrNotExist) {
			return
		}
		if time.Now().After(deadline) {
			stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			t.Fatalf("process %d still exists: %s", pid, stat)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkTimeoutKills runs code, which prints its pid and then loops for
// ever, and checks that the run's timeout ends it with SIGKILL and that
// the process is gone. A program killed before it printed its pid (a slow
// start) leaves nothing to wait for; it runs again with twice the timeout.
func checkTimeoutKills(t *testing.T, language, code string) {
	t.Helper()
	for timeout := 500 * time.Millisecond; ; timeout *= 2 {
		c := startAgent(t, testConfig(t, language))
		c.hello()
		res := c.run(wire.Run{Code: code, TimeoutMS: timeout.Milliseconds()})
		exit := res.mustExit(t)
		if exit.ExitCode != 137 || exit.Signal != 9 || exit.Reason != "timeout" {
			t.Errorf("exit = %+v, want 137, signal 9, timeout", exit)
		}
		// The timer cannot fire sooner; the loop never ends by itself, so
		// the upper bound is only a safety net.
		if exit.ExecNS < int64(timeout) || res.elapsed > 2*time.Minute {
			t.Errorf("exec %v, result after %v, want after %v, within two minutes", time.Duration(exit.ExecNS), res.elapsed, timeout)
		}
		if len(res.stdout) == 0 && timeout < time.Minute {
			t.Logf("killed by its %v timeout before it printed: trying again", timeout)
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(res.stdout)))
		if err != nil {
			t.Fatalf("stdout %q: %v", res.stdout, err)
		}
		waitGone(t, pid)
		return
	}
}
