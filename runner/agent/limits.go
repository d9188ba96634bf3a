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

// Limits a run can be seen at the ceiling of, as limits_reached names them
// and as the driver's hints name them.
const (
	limitProcesses = "processes"
	limitDisk      = "disk"
)

// rlimitNproc is RLIMIT_NPROC on Linux, which package syscall does not name.
const rlimitNproc = 6

// limitState is what the sandbox's limits looked like at one moment.
type limitState struct {
	// tasks is the number of tasks, threads included, charged to the
	// user against the process limit.
	tasks int
	// nproc is the process limit; 0 means unknown or none.
	nproc int
	// free is the least space available to the user, in bytes, on the
	// writable filesystems; negative means unknown.
	free int64
}

// unknownState is a state in which nothing was read.
var unknownState = limitState{free: -1}

// atProcesses reports whether the next process or thread the user starts
// would be refused: gVisor refuses a clone when the count charged to the
// user's uid already equals RLIMIT_NPROC. No slack: a count one short is a
// program that could still start one.
func (st limitState) atProcesses() bool {
	return st.nproc > 0 && st.tasks >= st.nproc
}

// atDisk reports whether a writable filesystem had no space left at all.
func (st limitState) atDisk() bool {
	return st.free == 0
}

// reached names the limits at their ceiling in st, in a fixed order.
func (st limitState) reached() []string {
	var r []string
	if st.atProcesses() {
		r = append(r, limitProcesses)
	}
	if st.atDisk() {
		r = append(r, limitDisk)
	}
	return r
}

// limitReason refines reason, the verdict the agent drew from the
// program's wait status and its own actions, with what it saw of the
// sandbox's limits. Nothing the sandbox keeps records a refused process
// start or a full disk (gVisor counts no refused clones and its pids
// cgroup has no events file), so a limit is named only when two things
// meet:
//
//   - hint: the driver saw the program, or a Python child it forked, die
//     of the limit's own error, an uncaught EAGAIN from a process start
//     (processes) or an uncaught ENOSPC (disk). It comes from inside the
//     interpreter, where user code could write it too, so on its own it
//     changes nothing.
//   - at: the agent's own reading of the limit, taken when the first hint
//     arrived (the driver waits for it) or when the program ended, found
//     it at its ceiling (the user's charged tasks equal to RLIMIT_NPROC; a
//     writable filesystem with no space left).
//
// Only error is refined: a clean exit needs no excuse, output_limit and
// timeout are the agent's own doing, and killed is a signal nobody asked
// the limit about. A program can thus read pids_limit or disk_limit only
// by being at the limit's ceiling and failing after a hint: one the driver
// wrote for its error, or one it wrote itself while at the ceiling, which
// yields what an honest program in the same state gets. A refusal reads
// error when the limit has left its ceiling by the time of both readings.
func limitReason(reason, hint string, at limitState) string {
	if reason != reasonError {
		return reason
	}
	switch {
	case hint == limitProcesses && at.atProcesses():
		return reasonPidsLimit
	case hint == limitDisk && at.atDisk():
		return reasonDiskLimit
	}
	return reason
}

// mergeStates is the state in which each limit is at its worst of a and b:
// the agent reads the limits more than once in a run (at a hint, when the
// timer fires, when the program ends) and each reading is its own.
func mergeStates(a, b limitState) limitState {
	m := a
	if b.nproc > 0 && (m.nproc == 0 || b.tasks-b.nproc > m.tasks-m.nproc) {
		m.tasks, m.nproc = b.tasks, b.nproc
	}
	if b.free >= 0 && (m.free < 0 || b.free < m.free) {
		m.free = b.free
	}
	return m
}

// limitProbe reads the sandbox's limit state. Only the agent as PID 1 has
// one: anywhere else the processes and filesystems it would read are the
// host's.
type limitProbe struct {
	tasks func() int   // tasks charged to the user, threads included
	nproc func() int   // the process limit, 0 if unknown
	free  func() int64 // least free bytes of the writable filesystems, -1 if unknown
	// hold, when set, keeps the agent from reaping while the tasks are
	// counted: a task counts against the limit until it is reaped.
	hold func() (release func())

	once  sync.Once
	state limitState
}

// limitProbe is a fresh probe for one run when the agent is PID 1 (inside
// the sandbox), and nil anywhere else. interp is the interpreter's pid.
func (a *Agent) limitProbe(r *reaper, interp int) *limitProbe {
	if st := a.limits; st != nil {
		return &limitProbe{tasks: func() int { return st.tasks }, nproc: func() int { return st.nproc }, free: func() int64 { return st.free }}
	}
	if os.Getpid() != 1 {
		return nil
	}
	return newLimitProbe(a.cfg, r, interp)
}

// writablePaths are the filesystems a user can fill besides the working
// directory; one that is absent is skipped.
var writablePaths = []string{"/tmp", "/dev/shm"}

// newLimitProbe reads the real /proc, RLIMIT_NPROC and statfs for cfg's
// user and working directory.
func newLimitProbe(cfg Config, r *reaper, interp int) *limitProbe {
	return &limitProbe{
		tasks: func() int { return chargedTasks("/proc", cfg.UID, uncharged(cfg, interp)) },
		nproc: ownNproc,
		free:  func() int64 { return leastFree(append([]string{cfg.Workdir}, writablePaths...)...) },
		hold:  r.hold,
	}
}

// read reads the state now. A nil probe reads nothing.
func (p *limitProbe) read() limitState {
	if p == nil {
		return unknownState
	}
	var st limitState
	// The tasks first: they change fastest.
	func() {
		if p.hold != nil {
			release := p.hold()
			defer release()
		}
		st.tasks = p.tasks()
	}()
	st.nproc, st.free = p.nproc(), p.free()
	return st
}

// take reads the state the first time it is called and returns that first
// reading ever after: the moment that matters is when the program ended,
// or the timer fired, before the agent killed the rest.
func (p *limitProbe) take() limitState {
	if p == nil {
		return unknownState
	}
	p.once.Do(func() { p.state = p.read() })
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

// uncharged is the process chargedTasks leaves out: the interpreter on
// gVisor, none (pid 0) on the host's kernel, where the interpreter's
// switch to the user's uid moved its charge to that uid.
func uncharged(cfg Config, interp int) int {
	if cfg.HostKernel {
		return 0
	}
	return interp
}

// chargedTasks counts the tasks (threads included) of every process under
// proc whose real uid is uid, as gVisor charges them against RLIMIT_NPROC:
// a zombie counts as one until it is reaped, and the main task of interp,
// the interpreter, does not count, since the agent (root) cloned it before
// it took the user's uid and a task is charged to the uid that cloned it.
// Processes that vanish meanwhile are skipped.
func chargedTasks(proc string, uid, interp int) int {
	ents, err := os.ReadDir(proc)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
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
		if pid == interp {
			n--
		}
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

// stRdonly is ST_RDONLY in statfs's flags.
const stRdonly = 1

// leastFree is the least space available to an unprivileged user on the
// writable filesystems of paths, or -1 when none could be read. A
// read-only filesystem, which has no space to give whatever it holds, is
// skipped.
func leastFree(paths ...string) int64 {
	least := int64(-1)
	for _, p := range paths {
		var st syscall.Statfs_t
		if err := syscall.Statfs(p, &st); err != nil || st.Flags&stRdonly != 0 {
			continue
		}
		free := int64(st.Bavail) * int64(st.Bsize)
		if least < 0 || free < least {
			least = free
		}
	}
	return least
}
