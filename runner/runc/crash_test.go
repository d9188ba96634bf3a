package runc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner/runc"
)

// TestRuncCleanupAfterServerKilled kills, with SIGKILL, a process that
// started a container (the test binary standing in for the server), then
// has a new runtime on the same state clean up. The orphaned agent sees
// its frame channel end and exits soon after, but its cgroup, state,
// mounts and bundle stay until a cleanup removes them (and kills the
// agent, should it still run).
func TestRuncCleanupAfterServerKilled(t *testing.T) {
	e := newRealEnv(t)
	state := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashStateEnv+"="+state)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the stand-in printed no sandbox: %v", err)
	}
	id := strings.TrimSpace(line)
	t.Cleanup(func() { // whatever the test found, nothing stays behind
		if rt, err := runc.New(runc.Config{StateDir: state, Agent: e.cfg.Agent}); err == nil {
			_, _ = rt.Cleanup(context.Background())
		}
	})
	initPid := statePid(t, filepath.Join(state, "containers", id, "state.json"))
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	// What the dead server left, without which the test proves nothing.
	for _, p := range leftovers(state, id) {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s is not there after the crash: %v", p, err)
		}
	}
	if !mounted(t, state) {
		t.Fatal("the crashed sandbox's root is not mounted")
	}

	rt, err := runc.New(runc.Config{StateDir: state, Agent: e.cfg.Agent})
	if err != nil {
		t.Fatal(err)
	}
	n, err := rt.Cleanup(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("cleanup: %d, %v; want 1 destroyed", n, err)
	}
	deadline := time.Now().Add(time.Minute) // a safety net: the agent is reaped by the host's init
	for running(initPid) {
		if time.Now().After(deadline) {
			t.Fatalf("the orphaned agent (pid %d) is still running", initPid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, p := range leftovers(state, id) {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there (%v)", p, err)
		}
	}
	if mounted(t, state) {
		t.Errorf("mounts under %s are left", state)
	}
}

// leftovers are what container id leaves on the host until it is
// removed: its state, its bundle and its memory cgroup (v1 or v2).
func leftovers(state, id string) []string {
	cg := "/sys/fs/cgroup/paddock-runc/" + id
	if _, err := os.Stat("/sys/fs/cgroup/memory"); err == nil {
		cg = "/sys/fs/cgroup/memory/paddock-runc/" + id
	}
	return []string{filepath.Join(state, "containers", id), filepath.Join(state, "bundles", id), cg}
}

// mounted reports whether anything is mounted under dir, as this thread
// sees it (see rootfs's mountPoints for why not /proc/self).
func mounted(t *testing.T, dir string) bool {
	t.Helper()
	mounts, err := os.ReadFile("/proc/thread-self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(mounts), dir+"/")
}

// statePid reads the init pid from a libcontainer state file.
func statePid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Pid int `json:"init_process_pid"`
	}
	if err := json.Unmarshal(b, &st); err != nil || st.Pid <= 0 {
		t.Fatalf("no init pid in %s: %v", path, err)
	}
	return st.Pid
}

// running reports whether pid exists and is not a zombie.
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X')
}

// TestMainThreadStaysOnTheHost starts and destroys a sandbox, then checks
// that the process's main thread is still in the host's mount namespace:
// without the package's init locking it, libcontainer's mount-source
// thread parks it in the container's namespace on the first start.
func TestMainThreadStaysOnTheHost(t *testing.T) {
	e := newRealEnv(t)
	sb, err := e.rt.Start(t.Context(), e.specs["python"])
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.Destroy(context.Background()); err != nil {
		t.Fatal(err)
	}
	self, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		t.Fatal(err)
	}
	this, err := os.Readlink("/proc/thread-self/ns/mnt")
	if err != nil {
		t.Fatal(err)
	}
	if self != this {
		t.Errorf("the main thread is in mount namespace %s, this thread in %s", self, this)
	}
}
