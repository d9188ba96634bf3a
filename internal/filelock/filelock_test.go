package filelock_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/paddock-dev/paddock/internal/filelock"
)

// flock locks belong to open file descriptions, so two acquisitions in one
// process conflict just as two processes' would.
func TestModes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	a, ok, err := filelock.TryAcquire(path, filelock.Shared)
	if err != nil || !ok {
		t.Fatalf("first shared: ok=%v err=%v", ok, err)
	}
	b, ok, err := filelock.TryAcquire(path, filelock.Shared)
	if err != nil || !ok {
		t.Fatalf("second shared beside a shared one: ok=%v err=%v", ok, err)
	}
	if _, ok, err := filelock.TryAcquire(path, filelock.Exclusive); err != nil || ok {
		t.Fatalf("exclusive beside two shared: ok=%v err=%v, want refused", ok, err)
	}
	a.Release()
	if _, ok, _ := filelock.TryAcquire(path, filelock.Exclusive); ok {
		t.Fatal("exclusive granted while one shared lock is still held")
	}
	b.Release()
	b.Release() // twice is harmless
	x, ok, err := filelock.TryAcquire(path, filelock.Exclusive)
	if err != nil || !ok {
		t.Fatalf("exclusive once all are released: ok=%v err=%v", ok, err)
	}
	if _, ok, _ := filelock.TryAcquire(path, filelock.Shared); ok {
		t.Fatal("shared granted beside an exclusive lock")
	}
	x.Release()
}

func TestAcquireWaitsForRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	held, _, err := filelock.TryAcquire(path, filelock.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan struct{})
	got := make(chan error, 1)
	go func() {
		l, err := filelock.Acquire(t.Context(), path, filelock.Exclusive, func() { close(waiting) })
		l.Release()
		got <- err
	}()
	<-waiting // the waiter found the lock busy
	held.Release()
	if err := <-got; err != nil {
		t.Fatalf("Acquire after the release: %v", err)
	}
}

func TestAcquireEndsWithItsContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	held, _, err := filelock.TryAcquire(path, filelock.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	ctx, cancel := context.WithCancel(t.Context())
	waiting := make(chan struct{})
	go func() { <-waiting; cancel() }()
	if _, err := filelock.Acquire(ctx, path, filelock.Shared, func() { close(waiting) }); err == nil {
		t.Fatal("Acquire returned a lock while an exclusive one is held")
	}
}
