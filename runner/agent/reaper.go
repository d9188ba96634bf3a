package agent

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// reaper is the only place that waits for children: it reaps every child
// (orphans included, the agent being init) and hands the status of the
// processes it was asked to watch to their channels. Nothing else in the
// process may call wait.
type reaper struct {
	log  *slog.Logger
	mu   sync.Mutex
	subs map[int]chan reaped
	sigs chan os.Signal
	// quiet is held while the reaper reaps, and by whoever must see no
	// task reaped meanwhile (see hold).
	quiet sync.Mutex
}

// reaped is how a watched child ended, as wait4 reported it.
type reaped struct {
	status syscall.WaitStatus
	// maxRSS is the child's peak resident memory, in bytes.
	maxRSS int64
}

// startReaper reaps children until ctx is done.
func startReaper(ctx context.Context, log *slog.Logger) *reaper {
	r := &reaper{log: log, subs: map[int]chan reaped{}, sigs: make(chan os.Signal, 1)}
	signal.Notify(r.sigs, syscall.SIGCHLD)
	go r.loop(ctx)
	return r
}

// spawn runs start, which creates one child, and watches that child. The
// lock makes sure the child's status is not reaped before it is watched.
func (r *reaper) spawn(start func() (int, error)) (int, <-chan reaped, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pid, err := start()
	if err != nil {
		return 0, nil, err
	}
	ch := make(chan reaped, 1)
	r.subs[pid] = ch
	return pid, ch, nil
}

func (r *reaper) loop(ctx context.Context) {
	defer signal.Stop(r.sigs)
	for {
		r.reap()
		select {
		case <-ctx.Done():
			return
		case <-r.sigs:
		}
	}
}

// hold stops the reaper from reaping until release is called: the limit
// probe counts tasks, and a task counts against the process limit until it
// is reaped, so none may vanish by the agent's hand while it counts. The
// children that end meanwhile are reaped after release.
func (r *reaper) hold() (release func()) {
	r.quiet.Lock()
	return func() {
		r.quiet.Unlock()
		select { // reap what ended while held, without waiting for another SIGCHLD
		case r.sigs <- syscall.SIGCHLD:
		default:
		}
	}
}

// reap collects every child that has ended.
func (r *reaper) reap() {
	for {
		var (
			ws syscall.WaitStatus
			ru syscall.Rusage
		)
		r.quiet.Lock()
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, &ru)
		r.quiet.Unlock()
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
		r.mu.Lock()
		ch, ok := r.subs[pid]
		delete(r.subs, pid)
		r.mu.Unlock()
		if ok {
			ch <- reaped{status: ws, maxRSS: ru.Maxrss << 10} // Linux counts it in KiB
		}
	}
}

// becomeSubreaper makes orphans of the agent's descendants its children,
// as they are when the agent is PID 1, so that they are reaped here too.
func becomeSubreaper() error {
	const prSetChildSubreaper = 36
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return errno
	}
	return nil
}
