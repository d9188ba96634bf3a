package host

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestRunQueueCountsThreadsPresentInBoth(t *testing.T) {
	dir := t.TempDir()
	write := func(tid, stat string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, tid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, tid, "schedstat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("10", "500 1000 3\n")
	write("11", "500 2000 3\n")
	write("12", "garbage\n")
	before := readRunQueue(dir, []string{"10", "11", "12", "13"})
	if len(before) != 2 || before["10"] != 1000 || before["11"] != 2000 {
		t.Fatalf("before = %v, want 10:1000 and 11:2000 (12 unparsable, 13 missing)", before)
	}
	write("10", "900 4000 9\n")
	write("14", "100 7000 1\n")                      // started in between: its whole wait is not this window's
	after := readRunQueue(dir, []string{"10", "14"}) // 11 ended in between
	if got, want := after.Since(before), 3000*time.Nanosecond; got != want {
		t.Fatalf("since = %v, want %v", got, want)
	}
}

func TestRunQueueOfThisProcess(t *testing.T) {
	rq, err := ProcessRunQueue(os.Getpid())
	if err != nil {
		t.Skipf("no schedstat here: %v", err)
	}
	if len(rq) == 0 {
		t.Fatal("no thread of this process read")
	}
}
