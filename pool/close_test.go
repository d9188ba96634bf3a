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

func TestCloseDestroysEverything(t *testing.T) {
	rt := &runnertest.Runtime{}
	m := newManager(t, rt, pool.Config{Templates: []pool.Template{tmpl("python", 3), tmpl("node", 2)}})
	waitFor(t, "python filled", readyCount(m, "python"))
	waitFor(t, "node filled", readyCount(m, "node"))

	lease, err := m.Acquire(t.Context(), "node")
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}

	// A leased sandbox holds Close back until it is released.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if err := m.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close with a lease out = %v, want DeadlineExceeded", err)
	}
	if m.Ready() {
		t.Error("Ready after Close = true, want false")
	}
	if _, err := m.Acquire(t.Context(), "python"); !errors.Is(err, pool.ErrClosed) {
		t.Errorf("Acquire after Close = %v, want ErrClosed", err)
	}
	if _, err := m.Run(t.Context(), "python", runner.RunRequest{}, nil); !errors.Is(err, pool.ErrClosed) {
		t.Errorf("Run after Close = %v, want ErrClosed", err)
	}

	m.Release(lease.Sandbox)
	if err := m.Close(t.Context()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got := rt.Live(); got != 0 {
		t.Errorf("Live = %d, want 0", got)
	}
}

func TestCloseWithoutStart(t *testing.T) {
	rt := &runnertest.Runtime{}
	m, err := pool.New(rt, pool.Config{Templates: []pool.Template{tmpl("python", 2)}}, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := m.Close(t.Context()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	m.Start() // after Close: does nothing
	if got := rt.Starts(); got != 0 {
		t.Errorf("Starts = %d, want 0", got)
	}
}

// A filler whose start completes after Close began must not leak the
// sandbox, even when the runtime ignores the cancelled context.
func TestCloseDestroysLateFillerStart(t *testing.T) {
	entered := make(chan struct{})
	gate := make(chan struct{})
	cancelled := make(chan struct{})
	rt := &runnertest.Runtime{}
	rt.StartFunc = func(ctx context.Context, spec runner.Spec) (runner.Sandbox, error) {
		close(entered)
		<-ctx.Done() // Close has begun...
		close(cancelled)
		<-gate // ...but this start finishes anyway
		return rt.NewSandbox(spec), nil
	}
	m, err := pool.New(rt, pool.Config{Templates: []pool.Template{tmpl("python", 1)}}, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	m.Start()
	// The filler counts itself starting before it waits for a refill
	// slot; only once it is inside the runtime's Start may Close begin,
	// or Close would end the wait and no start would ever come.
	<-entered

	closed := make(chan error, 1)
	go func() { closed <- m.Close(context.Background()) }()
	<-cancelled
	close(gate)
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got, want := [2]int{rt.Started(), rt.Live()}, [2]int{1, 0}; got != want {
		t.Errorf("started, live = %v, want %v", got, want)
	}
}

// Close races with Run, Acquire/Release and Start; run with -race.
func TestCloseRacesWithUse(t *testing.T) {
	for i := range 20 {
		rt := &runnertest.Runtime{}
		m, err := pool.New(rt, pool.Config{
			Templates:   []pool.Template{tmpl("python", 2), tmpl("node", 0)},
			MaxRuns:     4,
			StartBudget: 2,
		}, nil)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		var wg sync.WaitGroup
		wg.Go(m.Start)
		for w := range 6 {
			wg.Go(func() {
				name := []string{"python", "node"}[w%2]
				for {
					var err error
					if w < 4 {
						_, err = m.Run(t.Context(), name, runner.RunRequest{Code: "x"}, nil)
					} else {
						var lease pool.Lease
						if lease, err = m.Acquire(t.Context(), name); err == nil {
							m.Release(lease.Sandbox)
						}
					}
					switch {
					case errors.Is(err, pool.ErrClosed):
						return
					case err != nil && !errors.Is(err, pool.ErrSaturated):
						t.Errorf("worker %d: %v", w, err)
						return
					}
				}
			})
		}
		waitFor(t, "some runs", func() bool { return rt.Started() >= 5+i%5 })
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a safety net only
		if err := m.Close(ctx); err != nil {
			t.Errorf("round %d: Close: %v", i, err)
		}
		cancel()
		wg.Wait()
		if got := rt.Live(); got != 0 {
			t.Fatalf("round %d: Live after Close = %d, want 0", i, got)
		}
	}
}
