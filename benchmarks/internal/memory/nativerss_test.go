package memory

import (
	"context"
	"os/exec"
	"testing"
	"time"
)

// TestIdleRSSReadsTheWaitingProcess runs the host's python3 with a warm-up
// that holds 64 MiB of written memory: the reading, taken while it waits,
// must hold it.
func TestIdleRSSReadsTheWaitingProcess(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on the host")
	}
	tail, err := idlingProgram("python", "held = bytearray(64 << 20)")
	if err != nil {
		t.Fatal(err)
	}
	s, err := idleRSS(context.Background(), exec.Command(py, tail...), 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if s.VmRSS < 64<<20 || s.RssAnon < 64<<20 || s.VmRSS != s.RssAnon+s.RssFile+s.RssShmem {
		t.Errorf("VmRSS %d, anon %d, file %d, shmem %d: want at least 64 MiB of anon, summing to VmRSS", s.VmRSS, s.RssAnon, s.RssFile, s.RssShmem)
	}
	// The kernel's high-water mark is updated lazily: it may lag VmRSS
	// by a little, but it has seen the 64 MiB.
	if s.MaxRSS < 64<<20 {
		t.Errorf("peak %d, want at least 64 MiB", s.MaxRSS)
	}
	if _, err := idleRSS(context.Background(), exec.Command(py, "-c", "print('not ready')"), 0); err == nil {
		t.Error("a process that never said ready was read")
	}
	if _, err := idlingProgram("ruby", ""); err == nil {
		t.Error("an idling program for ruby")
	}
}
