package pool_test

import (
	"context"
	"sync"
	"testing"

	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

func kernelTmpl(name string, size, kernels int) pool.Template {
	t := tmpl(name, size)
	t.Kernels = kernels
	t.Spec.Limits.MemoryBytes = 100 << 20
	return t
}

func kernelsReady(m *pool.Manager, template string, n int) func() bool {
	return func() bool { return stats(m, template).KernelsReady == n }
}

func TestAcquireKernelTakesAnOpenKernel(t *testing.T) {
	rt := &runnertest.Runtime{}
	m := newManager(t, rt, pool.Config{Templates: []pool.Template{kernelTmpl("python", 1, 1)}})
	waitFor(t, "one ready and one kernel-ready sandbox", func() bool {
		s := stats(m, "python")
		return s.Ready == 1 && s.KernelsReady == 1
	})

	lease, ok, err := m.AcquireKernel("python", pool.RunOptions{})
	if err != nil || !ok {
		t.Fatalf("AcquireKernel = %v, %v; want a kernel", ok, err)
	}
	defer m.Release(lease.Sandbox)
	if lease.Kind != pool.StartKernel {
		t.Errorf("Kind = %q, want %q", lease.Kind, pool.StartKernel)
	}
	sb := lease.Sandbox.(*runnertest.Sandbox)
	if got := sb.Kernel(); got == nil || runner.Kernel(got) != lease.Kernel {
		t.Errorf("the lease's kernel is not the one its sandbox opened")
	}
	if opts := sb.Kernel().Options; len(opts.Env) != 0 {
		t.Errorf("kernel opened with env %v, want none", opts.Env)
	}
	s := stats(m, "python")
	if s.KernelHits != 1 || s.KernelMisses != 0 || s.InUse != 1 || s.Hits != 0 || s.Misses != 0 || s.Kernels != 1 {
		t.Errorf("kernel hits, kernel misses, in use, hits, misses, kernels = %d, %d, %d, %d, %d, %d; want 1, 0, 1, 0, 0, 1",
			s.KernelHits, s.KernelMisses, s.InUse, s.Hits, s.Misses, s.Kernels)
	}
	waitFor(t, "the kernel-ready sandbox replaced", kernelsReady(m, "python", 1))

	// The one-shot list never held an open kernel: its sandbox is unused.
	one, err := m.Acquire(t.Context(), "python")
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	defer m.Release(one.Sandbox)
	if one.Kind != pool.StartPool || one.Sandbox.(*runnertest.Sandbox).Kernel() != nil {
		t.Errorf("one-shot lease: kind %q, kernel open %v; want pool, no kernel", one.Kind, one.Sandbox.(*runnertest.Sandbox).Kernel() != nil)
	}
}

func TestAcquireKernelFallsBack(t *testing.T) {
	t.Run("none kept", func(t *testing.T) {
		rt := &runnertest.Runtime{}
		m := newManager(t, rt, pool.Config{Templates: []pool.Template{kernelTmpl("python", 1, 0)}})
		waitFor(t, "pool filled", readyCount(m, "python"))
		if _, ok, err := m.AcquireKernel("python", pool.RunOptions{}); ok || err != nil {
			t.Fatalf("AcquireKernel = %v, %v; want none, no error", ok, err)
		}
		if s := stats(m, "python"); s.KernelMisses != 0 || s.KernelsReady != 0 || rt.Started() != 1 {
			t.Errorf("kernel misses, kernels ready, started = %d, %d, %d; want 0, 0, 1", s.KernelMisses, s.KernelsReady, rt.Started())
		}
	})
	t.Run("other limits", func(t *testing.T) {
		rt := &runnertest.Runtime{}
		m := newManager(t, rt, pool.Config{Templates: []pool.Template{kernelTmpl("python", 0, 1)}})
		waitFor(t, "kernel-ready", kernelsReady(m, "python", 1))
		if _, ok, err := m.AcquireKernel("python", pool.RunOptions{Limits: runner.Limits{CPUs: 0.5}}); ok || err != nil {
			t.Fatalf("AcquireKernel with other limits = %v, %v; want none, no error", ok, err)
		}
		// The template's own limits, spelt out, are no change.
		lease, ok, err := m.AcquireKernel("python", pool.RunOptions{Limits: runner.Limits{MemoryBytes: 100 << 20}})
		if !ok || err != nil {
			t.Fatalf("AcquireKernel with the template's limits = %v, %v; want a kernel", ok, err)
		}
		m.Release(lease.Sandbox)
		if s := stats(m, "python"); s.KernelMisses != 0 || s.KernelHits != 1 {
			t.Errorf("kernel misses, hits = %d, %d; want 0, 1", s.KernelMisses, s.KernelHits)
		}
	})
	t.Run("none ready yet", func(t *testing.T) {
		gate := make(chan struct{})
		rt := &runnertest.Runtime{}
		rt.StartFunc = func(ctx context.Context, spec runner.Spec) (runner.Sandbox, error) {
			if rt.Starts() > 1 {
				select { // the refill waits for the test
				case <-gate:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return rt.NewSandbox(spec), nil
		}
		m := newManager(t, rt, pool.Config{Templates: []pool.Template{kernelTmpl("python", 0, 1)}})
		defer close(gate)
		waitFor(t, "kernel-ready", kernelsReady(m, "python", 1))
		first, ok, err := m.AcquireKernel("python", pool.RunOptions{})
		if !ok || err != nil {
			t.Fatalf("first AcquireKernel = %v, %v; want a kernel", ok, err)
		}
		defer m.Release(first.Sandbox)
		if _, ok, err := m.AcquireKernel("python", pool.RunOptions{}); ok || err != nil {
			t.Fatalf("second AcquireKernel = %v, %v; want none, no error", ok, err)
		}
		if s := stats(m, "python"); s.KernelMisses != 1 || s.KernelHits != 1 {
			t.Errorf("kernel misses, hits = %d, %d; want 1, 1", s.KernelMisses, s.KernelHits)
		}
		waitFor(t, "the refill under way", func() bool { return stats(m, "python").KernelsStarting == 1 })
	})
	t.Run("unknown template", func(t *testing.T) {
		m := newManager(t, &runnertest.Runtime{}, pool.Config{Templates: []pool.Template{kernelTmpl("python", 0, 1)}})
		if _, _, err := m.AcquireKernel("ruby", pool.RunOptions{}); err == nil {
			t.Fatal("AcquireKernel(ruby) succeeded")
		}
	})
}

func TestKernelReadyCountsInBudget(t *testing.T) {
	var mu sync.Mutex
	var pm *pool.Manager
	peak := 0
	rt := &runnertest.Runtime{}
	rt.StartFunc = func(ctx context.Context, spec runner.Spec) (runner.Sandbox, error) {
		mu.Lock()
		if pm != nil { // the sandboxes the pool holds, this one included
			s := stats(pm, "python")
			peak = max(peak, s.Ready+s.Starting+s.InUse+s.KernelsReady+s.KernelsStarting)
		}
		mu.Unlock()
		return rt.NewSandbox(spec), nil
	}
	// Room for two sandboxes: the ready one and one kernel-ready, not
	// the second kernel-ready one the template asks for.
	m := newManager(t, rt, pool.Config{
		Templates:    []pool.Template{kernelTmpl("python", 1, 2)},
		MemoryBudget: 200 << 20,
	})
	mu.Lock()
	pm = m
	mu.Unlock()
	waitFor(t, "one ready and one kernel-ready sandbox", func() bool {
		s := stats(m, "python")
		return s.Ready == 1 && s.KernelsReady == 1
	})
	for range 3 { // each take and release pokes the fillers
		lease, ok, err := m.AcquireKernel("python", pool.RunOptions{})
		if !ok || err != nil {
			t.Fatalf("AcquireKernel = %v, %v; want a kernel", ok, err)
		}
		m.Release(lease.Sandbox)
		waitFor(t, "the kernel-ready sandbox replaced", kernelsReady(m, "python", 1))
	}
	mu.Lock()
	defer mu.Unlock()
	if peak > 2 {
		t.Errorf("the pool held %d sandboxes at once, over the budget of 2", peak)
	}
	if s := stats(m, "python"); s.KernelsReady != 1 || s.Kernels != 2 {
		t.Errorf("kernels ready, kept = %d, %d; want 1, 2", s.KernelsReady, s.Kernels)
	}
}

func TestKernelReadyWaitsForTheReadyList(t *testing.T) {
	gate := make(chan struct{})
	rt := &runnertest.Runtime{}
	rt.StartFunc = func(ctx context.Context, spec runner.Spec) (runner.Sandbox, error) {
		select { // every start waits for the test
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return rt.NewSandbox(spec), nil
	}
	m := newManager(t, rt, pool.Config{Templates: []pool.Template{kernelTmpl("python", 1, 1)}, MaxRefills: 2})
	waitFor(t, "the ready list's start", func() bool { return rt.Starts() == 1 })
	if s := stats(m, "python"); s.KernelsStarting != 0 {
		t.Errorf("kernels starting = %d while the ready list is short, want 0", s.KernelsStarting)
	}
	gate <- struct{}{}
	waitFor(t, "the kernel-ready start", func() bool { return rt.Starts() == 2 })
	close(gate)
	waitFor(t, "kernel-ready", kernelsReady(m, "python", 1))
}

func TestLostKernelIsReplaced(t *testing.T) {
	rt := &runnertest.Runtime{}
	m := newManager(t, rt, pool.Config{Templates: []pool.Template{kernelTmpl("python", 0, 1)}})
	waitFor(t, "kernel-ready", kernelsReady(m, "python", 1))
	rt.Sandboxes()[0].Kernel().Lose()
	waitFor(t, "a second kernel-ready sandbox", func() bool { return rt.Started() == 2 && stats(m, "python").KernelsReady == 1 })
	lease, ok, err := m.AcquireKernel("python", pool.RunOptions{})
	if !ok || err != nil {
		t.Fatalf("AcquireKernel = %v, %v; want a kernel", ok, err)
	}
	defer m.Release(lease.Sandbox)
	if got, want := lease.Sandbox.ID(), "fake-0002"; got != want {
		t.Errorf("sandbox = %s, want %s (the first one's kernel was lost)", got, want)
	}
}

func TestKernelsNegativeRejected(t *testing.T) {
	_, err := pool.New(&runnertest.Runtime{}, pool.Config{Templates: []pool.Template{kernelTmpl("python", 0, -1)}}, nil)
	if err == nil {
		t.Fatal("New with Kernels -1 succeeded")
	}
}
