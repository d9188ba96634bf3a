package agent

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// killer kills every user process. Inside the sandbox the agent is PID 1 and
// kill(-1) reaches everything but itself, including processes that left the
// interpreter's process group. Anywhere else (tests on a host) kill(-1) would
// hit the host, so only the interpreter's process group is killed.
//
// Whether the agent is PID 1 is read from the kernel at every call; it is
// never configurable.
type killer struct {
	// pgid is the interpreter's process group (its PID).
	pgid int
	// signal sends a signal; syscall.Kill outside tests.
	signal func(pid int, sig syscall.Signal) error
}

func newKiller(pgid int) killer { return killer{pgid: pgid, signal: syscall.Kill} }

// killAll sends SIGKILL to every user process. A target that is already
// gone is not an error.
func (k killer) killAll() error {
	target, err := killTarget(os.Getpid(), syscall.Getpgrp(), k.pgid)
	if err != nil {
		return err
	}
	if err := k.signal(target, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("killing %d: %w", target, err)
	}
	return nil
}

// killTarget is the pid argument for kill(2): -1 only when self is PID 1,
// otherwise the negated process group pgid, which must be a real group
// other than the agent's own.
func killTarget(self, ownPgrp, pgid int) (int, error) {
	if self == 1 {
		return -1, nil
	}
	if pgid <= 1 || pgid == ownPgrp {
		return 0, fmt.Errorf("process group %d: %w", pgid, ErrUnsafeKill)
	}
	return -pgid, nil
}

// killGroup sends SIGKILL to the process group pgid, a user process's own:
// never the agent's group, nor every process. A group already gone is not
// an error.
func killGroup(pgid int) error {
	if pgid <= 1 || pgid == syscall.Getpgrp() {
		return fmt.Errorf("process group %d: %w", pgid, ErrUnsafeKill)
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("killing process group %d: %w", pgid, err)
	}
	return nil
}
