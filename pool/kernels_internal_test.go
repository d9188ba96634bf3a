package pool

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner/runnertest"
)

// The first kernel-ready sandbox is made at once; the replacement of a
// taken one waits kernelRefillPause first, and is counted as starting
// meanwhile.
func TestKernelRefillPausesAfterATake(t *testing.T) {
	rt := &runnertest.Runtime{}
	m, err := New(rt, Config{Templates: []Template{{Name: "python", Kernels: 1}}}, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	var (
		mu     sync.Mutex
		waits  []time.Duration
		paused = make(chan struct{})
		resume = make(chan struct{})
	)
	m.wait = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		waits = append(waits, d)
		mu.Unlock()
		close(paused)
		select {
		case <-resume:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	m.Start()
	defer func() {
		if err := m.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
		if live := rt.Live(); live != 0 {
			t.Errorf("Live after Close = %d, want 0", live)
		}
	}()
	ready := func() bool { return m.Stats()[0].KernelsReady == 1 }
	for deadline := time.Now().Add(time.Minute); !ready(); time.Sleep(time.Millisecond) { // a safety net only
		if time.Now().After(deadline) {
			t.Fatal("no kernel-ready sandbox after a minute")
		}
	}
	lease, ok, err := m.AcquireKernel("python", RunOptions{})
	if !ok || err != nil {
		t.Fatalf("AcquireKernel = %v, %v; want a kernel", ok, err)
	}
	defer m.Release(lease.Sandbox)
	select {
	case <-paused:
	case <-time.After(time.Minute): // a safety net only
		t.Fatal("the replacement did not pause within a minute")
	}
	if s := m.Stats()[0]; s.KernelsStarting != 1 || rt.Starts() != 1 {
		t.Errorf("during the pause: kernels starting %d, starts %d; want 1, 1", s.KernelsStarting, rt.Starts())
	}
	close(resume)
	for deadline := time.Now().Add(time.Minute); !ready(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the taken kernel-ready sandbox was not replaced after a minute")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []time.Duration{kernelRefillPause}; !slices.Equal(waits, want) {
		t.Errorf("waits = %v, want %v", waits, want)
	}
}
