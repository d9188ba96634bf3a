// Package filelock takes advisory flock(2) locks that processes sharing a
// cache directory use to agree on who builds, uses or removes what.
//
// A lock file is never removed once made: a process that opened the old
// file would hold a lock nobody else can see, beside one on the new file.
// They are empty, so leaving them costs an inode each.
package filelock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// Poll is how often a waiting Acquire retries.
const Poll = 100 * time.Millisecond

// Mode is the kind of lock.
type Mode int

const (
	// Exclusive excludes every other lock on the file.
	Exclusive Mode = syscall.LOCK_EX
	// Shared excludes only Exclusive: any number may be held at once.
	Shared Mode = syscall.LOCK_SH
)

// Lock is one held lock. Its zero value is not useful.
type Lock struct {
	f *os.File
}

// Acquire takes a lock of mode on path, creating the file if needed, and
// waits for it until ctx ends. onWait, when not nil, runs once if the lock
// is busy at first.
func Acquire(ctx context.Context, path string, mode Mode, onWait func()) (*Lock, error) {
	for waited := false; ; {
		l, ok, err := TryAcquire(path, mode)
		if err != nil || ok {
			return l, err
		}
		if !waited && onWait != nil {
			onWait()
		}
		waited = true
		t := time.NewTimer(Poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("waiting for lock %s: %w", path, ctx.Err())
		case <-t.C:
		}
	}
}

// TryAcquire takes a lock of mode on path if it is free now; ok is false
// when another holder stands in the way.
func TryAcquire(path string, mode Mode) (l *Lock, ok bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, fmt.Errorf("opening lock: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), int(mode)|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	switch {
	case err == nil:
		return &Lock{f: f}, true, nil
	case errors.Is(err, syscall.EWOULDBLOCK):
		_ = f.Close()
		return nil, false, nil
	default:
		_ = f.Close()
		return nil, false, fmt.Errorf("locking %s: %w", path, err)
	}
}

// Release gives the lock up. It may be called more than once.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	_ = l.f.Close()
	l.f = nil
}
