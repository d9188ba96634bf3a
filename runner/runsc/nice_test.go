package runsc

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestStartNicedNicesTheChildOnly: the command runs at batchNice and the
// calling process keeps its own priority.
func TestStartNicedNicesTheChildOnly(t *testing.T) {
	own, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "PADDOCK_TEST_STAND_IN=1") // standInEnv: waits for stdin's end
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := startNiced(cmd); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("stand-in: %v", err)
		}
	}()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// Field 19 is the nice value; the fields after the command's name,
	// which ends in ')', start at field 3.
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if got := fields[19-3]; got != "10" {
		t.Errorf("child's nice = %s, want 10", got)
	}
	after, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	if err != nil {
		t.Fatal(err)
	}
	if after != own {
		t.Errorf("the caller's priority changed: %d, was %d", after, own)
	}
}
