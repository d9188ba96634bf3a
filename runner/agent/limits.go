package agent

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"sync"
	"syscall"
)

// Reasons for a run that ran into one of the sandbox's own limits.
const (
	reasonPidsLimit = "pids_limit"
	reasonDiskLimit = "disk_limit"
)

// pidsSlack is how far below the process limit the user's task count may
// be and still count as having reached it: tasks come and go while the
// agent counts them.
const pidsSlack = 2

// diskLow is the free space under which a filesystem counts as full.
const diskLow = 1 << 20

// rlimitNproc is RLIMIT_NPROC on Linux, which package syscall does not name.
const rlimitNproc = 6

// limitState is what the sandbox's limits looked like when a program ended.
type limitState struct {
	// tasks is the number of the user's tasks, threads included.
	tasks int
	// nproc is the process limit; 0 means unknown or none.
	nproc int
	// free is the least free space, in bytes, of the writable
	// filesystems; negative means unknown.
	free int64
	// forkRefused says the driver saw the program die of a process start
	// the limit refused (an uncaught EAGAIN from fork).
	forkRefused bool
}

// limitReason refines reason, the agent's verdict on a run, with what the
// sandbox's limits looked like when the program ended. Precedence:
//
//   - ok and output_limit stand: a clean exit needs no excuse, and an
//     output flood was stopped by the agent before anything else.
//   - pids_limit replaces error, killed and timeout when the user's tasks
//     were at (or within pidsSlack of) the process limit: a fork bomb that
//     also runs out the clock failed because it could not fork. It also
//     replaces error when the program died of a refused fork, though its
//     processes were gone by the time the agent counted them.
//   - disk_limit replaces error and killed when a writable filesystem had
//     less than diskLow free; a timeout stands, since a full disk does not
//     make a program run long.
func limitReason(reason string, st limitState) string {
	switch reason {
	case reasonError, reasonKilled, reasonTimeout:
	default:
		return reason
	}
	if pidsExhausted(st.tasks, st.nproc) || (reason == reasonError && st.forkRefused) {
		return reasonPidsLimit
	}
	if reason != reasonTimeout && st.free >= 0 && st.free < diskLow {
		return reasonDiskLimit
	}
	return reason
}

// pidsExhausted reports whether tasks is at or near the process limit.
func pidsExhausted(tasks, nproc int) bool {
	return nproc > 0 && tasks >= nproc-pidsSlack
}

// limitProbe reads the sandbox's limit state. Only the agent as PID 1 has
// one: anywhere else the processes and filesystems it would read are the
// host's.
type limitProbe struct {
	tasks func() int   // the user's tasks, threads included
	nproc func() int   // the process limit, 0 if unknown
	free  func() int64 // least free bytes of the writable filesystems, -1 if unknown

	once  sync.Once
	state limitState
}

// limitProbe is a fresh probe for one run when the agent is PID 1 (inside
// the sandbox), and nil anywhere else.
func (a *Agent) limitProbe() *limitProbe {
	if os.Getpid() != 1 {
		return nil
	}
	return newLimitProbe(a.cfg)
}

// newLimitProbe reads the real /proc, RLIMIT_NPROC and statfs for cfg's
// user and working directory.
func newLimitProbe(cfg Config) *limitProbe {
	return &limitProbe{
		tasks: func() int { return countTasks("/proc", cfg.UID) },
		nproc: ownNproc,
		free:  func() int64 { return leastFree(cfg.Workdir, "/tmp", "/dev/shm") },
	}
}

// take records the state the first time it is called and returns that
// first record ever after: the moment that matters is when the program
// ended, before the agent killed the rest. A nil probe records nothing.
func (p *limitProbe) take() limitState {
	if p == nil {
		return limitState{free: -1}
	}
	p.once.Do(func() {
		p.state = limitState{tasks: p.tasks(), nproc: p.nproc(), free: p.free()}
	})
	return p.state
}

// ownNproc is the agent's RLIMIT_NPROC, which user processes inherit.
func ownNproc() int {
	var rl syscall.Rlimit
	// RLIM_INFINITY, like any value past an int32, means no limit to reach.
	if err := syscall.Getrlimit(rlimitNproc, &rl); err != nil || rl.Cur > 1<<31 {
		return 0
	}
	return int(rl.Cur)
}

// countTasks counts the tasks (threads included) of every process under
// proc whose real uid is uid; a zombie counts as one, as it does against
// RLIMIT_NPROC. Processes that vanish meanwhile are skipped.
func countTasks(proc string, uid int) int {
	ents, err := os.ReadDir(proc)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		dir := proc + "/" + e.Name()
		if realUID(dir+"/status") != uid {
			continue
		}
		// A zombie has no tasks left but still counts against the limit
		// until it is reaped.
		tasks, _ := os.ReadDir(dir + "/task")
		n += max(len(tasks), 1)
	}
	return n
}

// realUID is the real uid on the Uid: line of a /proc/<pid>/status file,
// or -1.
func realUID(status string) int {
	b, err := os.ReadFile(status)
	if err != nil {
		return -1
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("Uid:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) == 0 {
			return -1
		}
		uid, err := strconv.Atoi(string(f[0]))
		if err != nil {
			return -1
		}
		return uid
	}
	return -1
}

// leastFree is the least space available to an unprivileged user on the
// filesystems of paths, or -1 when none could be read.
func leastFree(paths ...string) int64 {
	least := int64(-1)
	for _, p := range paths {
		var st syscall.Statfs_t
		if err := syscall.Statfs(p, &st); err != nil {
			continue
		}
		free := int64(st.Bavail) * int64(st.Bsize)
		if least < 0 || free < least {
			least = free
		}
	}
	return least
}
