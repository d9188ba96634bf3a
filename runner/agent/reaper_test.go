package agent

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// While the reaper is held, a child that ended stays a zombie (and so keeps
// counting against the process limit); released, it is reaped at once.
// Not parallel: the reaper waits for any child of the test process.
func TestReaperHold(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := startReaper(ctx, slog.New(slog.NewTextHandler(io.Discard, nil)))
	release := r.hold()
	pid, status, err := r.spawn(func() (int, error) {
		return syscall.ForkExec("/bin/sh", []string{"sh", "-c", "exit 7"}, &syscall.ProcAttr{})
	})
	if err != nil {
		release()
		t.Fatal(err)
	}
	// A safety net only: the child exits at once.
	deadline := time.Now().Add(time.Minute)
	for !isZombie(pid) {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err != nil {
			release()
			t.Fatalf("child %d reaped while the reaper was held", pid)
		}
		if time.Now().After(deadline) {
			release()
			t.Fatalf("child %d never became a zombie", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case r := <-status:
		t.Fatalf("child reaped while the reaper was held: %v", describeStatus(r.status))
	default:
	}
	release()
	select {
	case r := <-status:
		if r.status.ExitStatus() != 7 {
			t.Errorf("status %s, want exit status 7", describeStatus(r.status))
		}
	case <-time.After(time.Minute): // a safety net only
		t.Fatal("child not reaped after release")
	}
}

// isZombie reports whether pid is a zombie.
func isZombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && strings.HasPrefix(s[i+1:], " Z")
}
