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

func TestRun(t *testing.T) {
	rt := &runnertest.Runtime{}
	m := newManager(t, rt, pool.Config{Templates: []pool.Template{tmpl("python", 1)}})
	waitFor(t, "pool filled", readyCount(m, "python"))

	var streamed []string
	o, err := m.Run(t.Context(), "python", runner.RunRequest{Code: "print(1)"}, func(s runner.Stream, b []byte) {
		streamed = append(streamed, string(s)+":"+string(b))
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if o.Kind != pool.StartPool || o.SandboxID != "fake-0001" {
		t.Errorf("Kind, SandboxID = %q, %q; want pool, fake-0001", o.Kind, o.SandboxID)
	}
	if string(o.Result.Stdout) != "print(1)" || o.Result.Reason != runner.ReasonOK {
		t.Errorf("Result = %q, %q; want print(1), ok", o.Result.Stdout, o.Result.Reason)
	}
	if len(streamed) != 1 || streamed[0] != "stdout:print(1)" {
		t.Errorf("streamed = %q, want [stdout:print(1)]", streamed)
	}
	tm := o.Timing
	if tm.Queue < 0 || tm.Acquire < 0 || tm.Exec <= 0 || tm.Total < tm.Queue+tm.Acquire+tm.Exec {
		t.Errorf("Timing = %+v, want non-negative phases within Total", tm)
	}
	waitFor(t, "used sandbox destroyed", rt.Sandboxes()[0].Destroyed)
}

func TestRunAlwaysReleases(t *testing.T) {
	errBoom := errors.New("agent said no")
	tests := []struct {
		name    string
		run     runnertest.RunFunc
		cancel  bool // cancel the run's ctx once it started
		wantErr error
		panics  bool
	}{
		{
			name: "ok result",
			run: func(context.Context, runner.RunRequest, runner.OutputFunc) (runner.RunResult, error) {
				return runner.RunResult{Reason: runner.ReasonOK}, nil
			},
		},
		{
			name: "failing program is a result",
			run: func(context.Context, runner.RunRequest, runner.OutputFunc) (runner.RunResult, error) {
				return runner.RunResult{ExitCode: 1, Reason: runner.ReasonError}, nil
			},
		},
		{
			name: "runtime error",
			run: func(context.Context, runner.RunRequest, runner.OutputFunc) (runner.RunResult, error) {
				return runner.RunResult{}, errBoom
			},
			wantErr: errBoom,
		},
		{
			name: "bad request",
			run: func(context.Context, runner.RunRequest, runner.OutputFunc) (runner.RunResult, error) {
				return runner.RunResult{}, runner.ErrBadRequest
			},
			wantErr: runner.ErrBadRequest,
		},
		{
			name: "panic",
			run: func(context.Context, runner.RunRequest, runner.OutputFunc) (runner.RunResult, error) {
				panic("driver bug")
			},
			panics: true,
		},
		{
			name: "caller gives up",
			run: func(ctx context.Context, _ runner.RunRequest, _ runner.OutputFunc) (runner.RunResult, error) {
				<-ctx.Done()
				return runner.RunResult{}, ctx.Err()
			},
			cancel:  true,
			wantErr: context.Canceled,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			started := make(chan struct{})
			rt := &runnertest.Runtime{RunFunc: func(ctx context.Context, req runner.RunRequest, out runner.OutputFunc) (runner.RunResult, error) {
				close(started)
				return tc.run(ctx, req, out)
			}}
			m := newManager(t, rt, pool.Config{Templates: []pool.Template{tmpl("python", 0)}})
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tc.cancel {
				go func() {
					<-started
					cancel()
				}()
			}

			var err error
			panicked := func() (p bool) {
				defer func() { p = recover() != nil }()
				_, err = m.Run(ctx, "python", runner.RunRequest{Code: "x"}, nil)
				return false
			}()
			if panicked != tc.panics {
				t.Errorf("panicked = %v, want %v", panicked, tc.panics)
			}
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("Run error = %v, want %v", err, tc.wantErr)
			}
			waitFor(t, "sandbox destroyed", func() bool { return rt.Live() == 0 })
			if got := rt.Sandboxes()[0].Runs(); got != 1 {
				t.Errorf("Runs = %d, want 1", got)
			}
			if s := stats(m, "python"); s.InUse != 0 {
				t.Errorf("InUse = %d, want 0", s.InUse)
			}
		})
	}
}

// A run whose sandbox ignores ctx still ends promptly: the pool destroys the
// sandbox when ctx ends, and destroying ends the run.
func TestRunCancelDestroysSandbox(t *testing.T) {
	rt := &runnertest.Runtime{}
	started := make(chan struct{})
	rt.StartFunc = func(_ context.Context, spec runner.Spec) (runner.Sandbox, error) {
		sb := rt.NewSandbox(spec)
		sb.RunFunc = func(context.Context, runner.RunRequest, runner.OutputFunc) (runner.RunResult, error) {
			close(started)
			<-sb.Done() // deaf to ctx: only Destroy ends it
			return runner.RunResult{}, runner.ErrSandboxLost
		}
		return sb, nil
	}
	m := newManager(t, rt, pool.Config{Templates: []pool.Template{tmpl("python", 0)}})
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-started
		cancel()
	}()
	_, err := m.Run(ctx, "python", runner.RunRequest{}, nil)
	if !errors.Is(err, runner.ErrSandboxLost) {
		t.Errorf("Run error = %v, want ErrSandboxLost", err)
	}
	if got := rt.Sandboxes()[0].Destroys(); got != 1 {
		t.Errorf("Destroys = %d, want 1", got)
	}
}

func TestRunRetriesLostSandboxOnce(t *testing.T) {
	rt := &runnertest.Runtime{}
	rt.StartFunc = func(_ context.Context, spec runner.Spec) (runner.Sandbox, error) {
		sb := rt.NewSandbox(spec)
		if sb.ID() == "fake-0001" {
			sb.Kill()
		}
		return sb, nil
	}
	m := newManager(t, rt, pool.Config{Templates: []pool.Template{tmpl("python", 0)}})
	o, err := m.Run(t.Context(), "python", runner.RunRequest{Code: "hi"}, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if o.SandboxID != "fake-0002" || string(o.Result.Stdout) != "hi" {
		t.Errorf("SandboxID, Stdout = %q, %q; want fake-0002, hi", o.SandboxID, o.Result.Stdout)
	}
	waitFor(t, "both destroyed", func() bool { return rt.Destroyed() == 2 })
}

func TestRunBusy(t *testing.T) {
	unblock := make(chan struct{})
	running := make(chan struct{}, 1)
	rt := &runnertest.Runtime{RunFunc: func(ctx context.Context, _ runner.RunRequest, _ runner.OutputFunc) (runner.RunResult, error) {
		running <- struct{}{}
		<-unblock
		return runner.RunResult{Reason: runner.ReasonOK}, nil
	}}
	m := newManager(t, rt, pool.Config{
		Templates:     []pool.Template{tmpl("python", 0)},
		MaxRuns:       1,
		QueueDeadline: 20 * time.Millisecond,
	})

	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := m.Run(context.Background(), "python", runner.RunRequest{}, nil); err != nil {
			t.Errorf("first Run: %v", err)
		}
	})
	<-running
	_, err := m.Run(t.Context(), "python", runner.RunRequest{}, nil)
	if !errors.Is(err, pool.ErrSaturated) {
		t.Errorf("second Run error = %v, want ErrSaturated", err)
	}
	close(unblock)
	wg.Wait()

	if _, err := m.Run(t.Context(), "python", runner.RunRequest{}, nil); err != nil {
		t.Errorf("Run after the slot freed: %v", err)
	}
}

func TestRunUnknownTemplate(t *testing.T) {
	m := newManager(t, &runnertest.Runtime{}, pool.Config{Templates: []pool.Template{tmpl("python", 0)}})
	if _, err := m.Run(t.Context(), "cobol", runner.RunRequest{}, nil); !errors.Is(err, pool.ErrUnknownTemplate) {
		t.Errorf("Run error = %v, want ErrUnknownTemplate", err)
	}
}

// A run that waited before reaching the pool (RunOptions.Since) has that
// wait in its queue time and total, and what is left of the deadline
// counted from Since: with none left, a run that cannot be served at
// once is refused at once instead of waiting a whole deadline.
func TestRunSince(t *testing.T) {
	unblock := make(chan struct{})
	running := make(chan struct{}, 1)
	rt := &runnertest.Runtime{RunFunc: func(ctx context.Context, req runner.RunRequest, _ runner.OutputFunc) (runner.RunResult, error) {
		if req.Code == "block" {
			running <- struct{}{}
			<-unblock
		}
		return runner.RunResult{Reason: runner.ReasonOK}, nil
	}}
	m := newManager(t, rt, pool.Config{
		Templates:     []pool.Template{tmpl("python", 0)},
		MaxRuns:       1,
		QueueDeadline: time.Hour,
	})

	arrived := time.Now().Add(-3 * time.Second)
	o, err := m.RunWith(t.Context(), "python", pool.RunOptions{Since: arrived}, runner.RunRequest{Code: "x"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.Timing.Queue < 3*time.Second || o.Timing.Total < o.Timing.Queue+o.Timing.Exec {
		t.Errorf("timing %+v, want the 3 s before the pool in queue and total", o.Timing)
	}

	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := m.Run(context.Background(), "python", runner.RunRequest{Code: "block"}, nil); err != nil {
			t.Errorf("blocking Run: %v", err)
		}
	})
	<-running
	refused := make(chan error, 1)
	go func() {
		_, err := m.RunWith(t.Context(), "python", pool.RunOptions{Since: time.Now().Add(-time.Hour)}, runner.RunRequest{Code: "x"}, nil)
		refused <- err
	}()
	select {
	case err := <-refused:
		if !errors.Is(err, pool.ErrSaturated) {
			t.Errorf("a run whose deadline passed before it came: %v, want ErrSaturated", err)
		}
	case <-time.After(time.Minute): // a safety net: without Since it would wait an hour
		t.Error("a run whose deadline passed before it came still waits")
	}
	close(unblock)
	wg.Wait()
}
