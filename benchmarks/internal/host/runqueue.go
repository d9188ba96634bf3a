package host

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// RunQueue is how long each thread of a set has waited, runnable, for a
// CPU since it started: the second field of /proc/<tid>/schedstat, in
// nanoseconds, by thread id. The session tail reads it of the kernel's
// sandbox and of the server around each condition, to tell time lost to
// the host scheduler from time spent working.
type RunQueue map[string]uint64

// CgroupRunQueue reads the threads of the cgroup v1 directory dir.
func CgroupRunQueue(dir string) (RunQueue, error) {
	b, err := os.ReadFile(filepath.Join(dir, "tasks"))
	if err != nil {
		return nil, err
	}
	var tids []string
	for _, f := range bytes.Fields(b) {
		tids = append(tids, string(f))
	}
	return readRunQueue("/proc", tids), nil
}

// ProcessRunQueue reads the threads of process pid.
func ProcessRunQueue(pid int) (RunQueue, error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	tids := make([]string, 0, len(ents))
	for _, e := range ents {
		tids = append(tids, e.Name())
	}
	return readRunQueue(dir, tids), nil
}

// readRunQueue reads dir/<tid>/schedstat of each thread; one that has
// exited meanwhile is left out.
func readRunQueue(dir string, tids []string) RunQueue {
	rq := RunQueue{}
	for _, tid := range tids {
		b, err := os.ReadFile(filepath.Join(dir, tid, "schedstat"))
		if err != nil {
			continue
		}
		f := bytes.Fields(b)
		if len(f) < 2 {
			continue
		}
		if ns, err := strconv.ParseUint(string(f[1]), 10, 64); err == nil {
			rq[tid] = ns
		}
	}
	return rq
}

// Since is the wait added between b and a by the threads present in both:
// a thread that started or ended in between is not counted.
func (a RunQueue) Since(b RunQueue) time.Duration {
	var sum uint64
	for tid, ns := range a {
		if old, ok := b[tid]; ok && ns >= old {
			sum += ns - old
		}
	}
	return time.Duration(sum)
}
