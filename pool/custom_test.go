package pool_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

const mib = 1 << 20

// limitedTmpl is a snapshotted template with every limit set and a
// warm-up, as the server configures them.
func limitedTmpl(size int) pool.Template {
	return pool.Template{
		Name: "python",
		Spec: runner.Spec{
			Language: "python", Rootfs: "/rootfs/python", Warmup: "import numpy",
			Limits: runner.Limits{MemoryBytes: 512 * mib, Processes: 64, CPUs: 1, DiskBytes: 256 * mib, OpenFiles: 1024},
		},
		Size:     size,
		Snapshot: true,
	}
}

func sandboxByID(t *testing.T, rt *runnertest.Runtime, id string) *runnertest.Sandbox {
	t.Helper()
	for _, sb := range rt.Sandboxes() {
		if sb.ID() == id {
			return sb
		}
	}
	t.Fatalf("no sandbox %q", id)
	return nil
}

func TestRunWithLimits(t *testing.T) {
	tests := []struct {
		name       string
		limits     runner.Limits
		wantKind   pool.StartKind
		wantLimits runner.Limits
		wantWarmup string
	}{
		{
			name:       "no override",
			wantKind:   pool.StartPool,
			wantLimits: runner.Limits{MemoryBytes: 512 * mib, Processes: 64, CPUs: 1, DiskBytes: 256 * mib, OpenFiles: 1024},
			wantWarmup: "import numpy",
		},
		{
			name:       "the template's own values",
			limits:     runner.Limits{MemoryBytes: 512 * mib, Processes: 64, CPUs: 1, DiskBytes: 256 * mib, OpenFiles: 1024},
			wantKind:   pool.StartPool,
			wantLimits: runner.Limits{MemoryBytes: 512 * mib, Processes: 64, CPUs: 1, DiskBytes: 256 * mib, OpenFiles: 1024},
			wantWarmup: "import numpy",
		},
		{
			name:       "memory",
			limits:     runner.Limits{MemoryBytes: 128 * mib},
			wantKind:   pool.StartCold,
			wantLimits: runner.Limits{MemoryBytes: 128 * mib, Processes: 64, CPUs: 1, DiskBytes: 256 * mib, OpenFiles: 1024},
		},
		{
			name:       "processes and disk",
			limits:     runner.Limits{Processes: 16, DiskBytes: 32 * mib},
			wantKind:   pool.StartCold,
			wantLimits: runner.Limits{MemoryBytes: 512 * mib, Processes: 16, CPUs: 1, DiskBytes: 32 * mib, OpenFiles: 1024},
		},
		{
			name:       "every limit",
			limits:     runner.Limits{MemoryBytes: 2048 * mib, Processes: 256, CPUs: 2, DiskBytes: 1024 * mib, OpenFiles: 4096},
			wantKind:   pool.StartCold,
			wantLimits: runner.Limits{MemoryBytes: 2048 * mib, Processes: 256, CPUs: 2, DiskBytes: 1024 * mib, OpenFiles: 4096},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := &snapRuntime{Runtime: &runnertest.Runtime{}}
			m := newManager(t, rt, pool.Config{Templates: []pool.Template{limitedTmpl(1)}})
			waitFor(t, "snapshot ready", func() bool { return stats(m, "python").Snapshot == "ready" })
			waitFor(t, "pool filled", readyCount(m, "python"))
			before := stats(m, "python")
			_, restoresBefore, _ := rt.counts()

			o, err := m.RunWith(t.Context(), "python", pool.RunOptions{Limits: tc.limits}, runner.RunRequest{Code: "print(1)"}, nil)
			if err != nil {
				t.Fatalf("RunWith: %v", err)
			}
			if o.Kind != tc.wantKind {
				t.Errorf("Kind = %q, want %q", o.Kind, tc.wantKind)
			}
			if string(o.Result.Stdout) != "print(1)" {
				t.Errorf("Stdout = %q, want print(1)", o.Result.Stdout)
			}
			sb := sandboxByID(t, rt.Runtime, o.SandboxID)
			if sb.Spec.Limits != tc.wantLimits {
				t.Errorf("started with Limits %+v, want %+v", sb.Spec.Limits, tc.wantLimits)
			}
			if sb.Spec.Warmup != tc.wantWarmup || sb.Spec.Rootfs != "/rootfs/python" || sb.Spec.Template != "python" {
				t.Errorf("started with Warmup %q, Rootfs %q, Template %q; want %q, /rootfs/python, python",
					sb.Spec.Warmup, sb.Spec.Rootfs, sb.Spec.Template, tc.wantWarmup)
			}
			waitFor(t, "used sandbox destroyed", sb.Destroyed)

			after := stats(m, "python")
			if tc.wantKind == pool.StartCold {
				// Never restored, never taken from the pool, no miss: the
				// pool could not have served it.
				if _, restores, _ := rt.counts(); restores != restoresBefore {
					t.Errorf("restores went from %d to %d; a custom sandbox must cold-start", restoresBefore, restores)
				}
				if after.Hits != 0 || after.Misses != 0 || after.ColdStarts != before.ColdStarts+1 {
					t.Errorf("Hits, Misses, ColdStarts = %d, %d, %d; want 0, 0, %d",
						after.Hits, after.Misses, after.ColdStarts, before.ColdStarts+1)
				}
			}
			waitFor(t, "nothing in use", func() bool { return stats(m, "python").InUse == 0 })
		})
	}
}

func TestRunWithLimitsTakesARunSlot(t *testing.T) {
	unblock := make(chan struct{})
	running := make(chan struct{}, 1)
	rt := &runnertest.Runtime{RunFunc: func(ctx context.Context, _ runner.RunRequest, _ runner.OutputFunc) (runner.RunResult, error) {
		running <- struct{}{}
		<-unblock
		return runner.RunResult{Reason: runner.ReasonOK}, nil
	}}
	m := newManager(t, rt, pool.Config{
		Templates:     []pool.Template{limitedTmpl(0)},
		MaxRuns:       1,
		QueueDeadline: 20 * time.Millisecond,
	})
	custom := pool.RunOptions{Limits: runner.Limits{Processes: 16}}

	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := m.Run(context.Background(), "python", runner.RunRequest{}, nil); err != nil {
			t.Errorf("first Run: %v", err)
		}
	})
	<-running
	if _, err := m.RunWith(t.Context(), "python", custom, runner.RunRequest{}, nil); !errors.Is(err, pool.ErrSaturated) {
		t.Errorf("RunWith error = %v, want ErrSaturated", err)
	}
	if got := rt.Starts(); got != 1 {
		t.Errorf("Starts = %d, want 1 (RunWith waited for a run slot)", got)
	}
	close(unblock)
	wg.Wait()
}

func TestRunWithLimitsTakesAColdStartSlot(t *testing.T) {
	gate := make(chan struct{})
	rt := &runnertest.Runtime{}
	rt.StartFunc = func(ctx context.Context, spec runner.Spec) (runner.Sandbox, error) {
		select {
		case <-gate:
			return rt.NewSandbox(spec), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	m := newManager(t, rt, pool.Config{Templates: []pool.Template{limitedTmpl(0)}, StartBudget: 1})

	first := make(chan pool.Lease, 1)
	go func() {
		lease, err := m.Acquire(context.Background(), "python")
		if err != nil {
			t.Errorf("Acquire: %v", err)
		}
		first <- lease
	}()
	waitFor(t, "cold start begun", func() bool { return rt.Starts() == 1 })

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	custom := pool.RunOptions{Limits: runner.Limits{MemoryBytes: 128 * mib}}
	if _, err := m.RunWith(ctx, "python", custom, runner.RunRequest{}, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("RunWith error = %v, want DeadlineExceeded", err)
	}
	if got := rt.Starts(); got != 1 {
		t.Errorf("Starts = %d, want 1 (RunWith waited for a start slot)", got)
	}
	close(gate)
	if lease := <-first; lease.Sandbox != nil {
		m.Release(lease.Sandbox)
	}
}

func TestRunWithLimitsStartFailure(t *testing.T) {
	errNoMemory := errors.New("sandbox needs more memory")
	rt := &runnertest.Runtime{}
	rt.StartFunc = func(ctx context.Context, spec runner.Spec) (runner.Sandbox, error) {
		if spec.Limits.MemoryBytes < 100*mib {
			return nil, errNoMemory
		}
		return rt.NewSandbox(spec), nil
	}
	m := newManager(t, rt, pool.Config{Templates: []pool.Template{limitedTmpl(1)}})
	waitFor(t, "pool filled", readyCount(m, "python"))

	custom := pool.RunOptions{Limits: runner.Limits{MemoryBytes: 64 * mib}}
	_, err := m.RunWith(t.Context(), "python", custom, runner.RunRequest{}, nil)
	if !errors.Is(err, errNoMemory) {
		t.Fatalf("RunWith error = %v, want %v", err, errNoMemory)
	}
	st := stats(m, "python")
	if st.InUse != 0 || st.Starting != 0 || st.StartFailures != 1 || st.Ready != 1 {
		t.Errorf("after a failed start: InUse %d, Starting %d, StartFailures %d, Ready %d; want 0, 0, 1, 1",
			st.InUse, st.Starting, st.StartFailures, st.Ready)
	}
}

func TestRunWithLimitsCloseDuringStart(t *testing.T) {
	rt := &runnertest.Runtime{}
	rt.StartFunc = func(ctx context.Context, spec runner.Spec) (runner.Sandbox, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	m, err := pool.New(rt, pool.Config{Templates: []pool.Template{limitedTmpl(0)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	done := make(chan error, 1)
	go func() {
		_, err := m.RunWith(context.Background(), "python", pool.RunOptions{Limits: runner.Limits{CPUs: 2}}, runner.RunRequest{}, nil)
		done <- err
	}()
	waitFor(t, "custom start begun", func() bool { return rt.Starts() == 1 })
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a safety net only
	defer cancel()
	if err := m.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-done; !errors.Is(err, pool.ErrClosed) {
		t.Errorf("RunWith error = %v, want ErrClosed", err)
	}
}
