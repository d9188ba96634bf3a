package agent

import (
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
	"time"
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
	report *os.File // read end of the child's fd 4, the driver's reports and hints

	exited chan struct{}      // closed once the process has ended
	status syscall.WaitStatus // valid after exited is closed
	peaks  rssPeaks           // its resident memory, for telling a heap exhaustion

	closeOnce sync.Once
	closeErr  error
}

// startInterpreter starts the driver as the configured user, in its own
// process group, with a minimal environment, from the startup snapshot
// blob if that is set. The reaper watches it.
func startInterpreter(r *reaper, cfg Config, path, blob string) (*interpreter, error) {
	argv, err := driverArgv(cfg.Language, path, cfg.Warmup, cfg.HeapMB, blob)
	if err != nil {
		return nil, err
	}
	// The child writes stdout, stderr and its reports (fd 4).
	ours, theirs, err := userPipes(cfg, []bool{false, true, true, false, true})
	if err != nil {
		return nil, err
	}
	pid, status, err := spawnUser(r, cfg, path, argv, interpreterEnv(cfg.Workdir), cfg.Workdir, theirs)
	if err != nil {
		closeFiles(ours)
		return nil, err
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

// hints reads what the driver hints on fd 4 during a one-shot run: a
// limit it saw the program die of (see limitReason). Each byte there may
// come from user code, so a hint is only a cue: on the first one naming a
// known limit, at is called at once and its reading is what the hint is
// judged by. Every hint is then acknowledged with ack, which the driver
// waits for: the program's own end (its threads gone, its children
// handed to the agent and reaped) would otherwise change the limits
// before they are read. The frames after the first hint are read and
// dropped, so that writers never block on fd 4.
func (in *interpreter) hints(at func() limitState, ack func()) *hintReader {
	h := &hintReader{done: make(chan struct{})}
	go func() {
		defer close(h.done)
		r := newDriverReaderSize(in.report, reportBuffer)
		r.max = reportBuffer
		for {
			rep, err := r.next()
			if err != nil {
				if errors.Is(err, ErrDriverProtocol) {
					io.Copy(io.Discard, in.report)
				}
				return
			}
			if rep.Op != opLimit || (rep.Limit != limitProcesses && rep.Limit != limitDisk) {
				continue
			}
			h.mu.Lock()
			if h.hint == "" {
				h.hint, h.at = rep.Limit, at()
			}
			h.mu.Unlock()
			ack()
		}
	}()
	return h
}

// hintReader is the result of interpreter.hints.
type hintReader struct {
	done chan struct{} // closed once fd 4 has ended
	mu   sync.Mutex
	hint string     // the first limit hinted, or ""
	at   limitState // the agent's reading when the hint arrived
}

// first is the first hint and the reading it was judged by, waiting at
// most grace for fd 4 to end: the driver hints before the program exits,
// so the hint is in the pipe by the time the exit is seen, and only a
// forked child still holding fd 4 keeps it from ending.
func (h *hintReader) first(grace time.Duration) (string, limitState) {
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-h.done:
	case <-t.C:
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.hint == "" {
		return "", unknownState
	}
	return h.hint, h.at
}
