package agent

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
)

// interpreter is the pre-started interpreter and the agent's ends of its
// pipes. The child's ends are closed in the agent once it has started.
type interpreter struct {
	pid    int
	kill   killer
	stdin  *os.File // write end of the child's fd 0
	stdout *os.File // read end of the child's fd 1
	stderr *os.File // read end of the child's fd 2
	ctl    *os.File // write end of the child's fd 3, the request
	report *os.File // read end of the child's fd 4, the driver's exit status

	exited chan struct{}      // closed once the process has ended
	status syscall.WaitStatus // valid after exited is closed
	peaks  rssPeaks           // its resident memory, for telling a heap exhaustion

	closeOnce sync.Once
	closeErr  error
}

// startInterpreter starts the driver as the configured user, in its own
// process group, with a minimal environment. The reaper watches it.
func startInterpreter(r *reaper, cfg Config, path string) (*interpreter, error) {
	argv, err := driverArgv(cfg.Language, path, cfg.Warmup, cfg.HeapMB)
	if err != nil {
		return nil, err
	}
	var ours, theirs [5]*os.File
	closeAll := func(fs []*os.File) {
		for _, f := range fs {
			if f != nil {
				f.Close()
			}
		}
	}
	for i := range ours {
		rd, wr, err := os.Pipe()
		if err != nil {
			closeAll(ours[:])
			closeAll(theirs[:])
			return nil, fmt.Errorf("creating pipe: %w", err)
		}
		if i == 1 || i == 2 || i == 4 { // the child writes stdout, stderr and its report
			ours[i], theirs[i] = rd, wr
		} else {
			ours[i], theirs[i] = wr, rd
		}
	}
	defer closeAll(theirs[:])
	if cfg.switchesUser() {
		// The user owns its pipes, so that it may reopen them through
		// /proc/self/fd (/dev/stdout; the drivers' close-on-exec copies).
		for _, f := range theirs {
			if err := f.Chown(cfg.UID, cfg.GID); err != nil {
				closeAll(ours[:])
				return nil, fmt.Errorf("giving a pipe to the user: %w", err)
			}
		}
	}

	spa := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if cfg.switchesUser() {
		spa.Credential = &syscall.Credential{Uid: uint32(cfg.UID), Gid: uint32(cfg.GID), Groups: []uint32{}}
	}
	attr := &syscall.ProcAttr{
		Dir: cfg.Workdir,
		Env: interpreterEnv(cfg.Workdir),
		// Fd puts the child's ends in blocking mode, as a child expects.
		Files: []uintptr{theirs[0].Fd(), theirs[1].Fd(), theirs[2].Fd(), theirs[3].Fd(), theirs[4].Fd()},
		Sys:   spa,
	}
	pid, status, err := r.spawn(func() (int, error) { return syscall.ForkExec(path, argv, attr) })
	if err != nil {
		closeAll(ours[:])
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	in := &interpreter{
		pid:    pid,
		kill:   newKiller(pid),
		stdin:  ours[0],
		stdout: ours[1],
		stderr: ours[2],
		ctl:    ours[3],
		report: ours[4],
		exited: make(chan struct{}),
	}
	go func() {
		r := <-status
		in.status, in.peaks.end = r.status, r.maxRSS
		close(in.exited)
	}()
	return in, nil
}

// hasExited reports whether the interpreter has ended.
func (in *interpreter) hasExited() bool {
	select {
	case <-in.exited:
		return true
	default:
		return false
	}
}

// close kills every user process and closes the agent's pipe ends. Only
// the first call does anything.
func (in *interpreter) close() error {
	in.closeOnce.Do(func() {
		err := in.kill.killAll()
		for _, f := range []*os.File{in.stdin, in.stdout, in.stderr, in.ctl, in.report} {
			if cerr := f.Close(); cerr != nil && !errors.Is(cerr, os.ErrClosed) {
				err = errors.Join(err, cerr)
			}
		}
		in.closeErr = err
	})
	return in.closeErr
}

// exitReport is the end of a one-shot program as its driver reports it.
type exitReport struct {
	status syscall.WaitStatus
	// forkRefused says the program died of a process start the process
	// limit refused.
	forkRefused bool
}

// reported delivers the exit status the driver reports on fd 4 once the
// program is over: its output is flushed and its stdout and stderr are
// closed, and it is about to _exit. Waiting for the process itself would add
// the interpreter's teardown to every run. The channel is closed after the
// report, or without one when fd 4 ends without a report (the process was
// killed, or called _exit itself, and no child holds the descriptor).
func (in *interpreter) reported() <-chan exitReport {
	ch := make(chan exitReport, 1)
	go func() {
		defer close(ch)
		rep, err := newDriverReaderSize(in.report, reportBuffer).next()
		if err != nil || rep.Op != opExit || rep.Code == nil || *rep.Code < 0 || *rep.Code > 255 {
			return
		}
		ch <- exitReport{
			status:      syscall.WaitStatus(*rep.Code << 8), // "exited with code"
			forkRefused: rep.Limit == "pids",
		}
	}()
	return ch
}
