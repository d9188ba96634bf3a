package pool_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

func TestAcquireHitOrMiss(t *testing.T) {
	tests := []struct {
		name       string
		size       int
		wantKind   pool.StartKind
		wantWarm   bool
		wantHits   uint64
		wantMisses uint64
	}{
		{name: "ready sandbox is a hit", size: 1, wantKind: pool.StartPool, wantWarm: true, wantHits: 1},
		{name: "size 0 is always cold", size: 0, wantKind: pool.StartCold, wantWarm: false, wantMisses: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := &runnertest.Runtime{}
			m := newManager(t, rt, pool.Config{Templates: []pool.Template{tmpl("python", tc.size)}})
			waitFor(t, "pool filled", readyCount(m, "python"))

			lease, err := m.Acquire(t.Context(), "python")
			if err != nil {
				t.Fatalf("Acquire: %v", err)
			}
			defer m.Release(lease.Sandbox)
			if lease.Kind != tc.wantKind || lease.Warm() != tc.wantWarm {
				t.Errorf("Kind, Warm = %q, %v; want %q, %v", lease.Kind, lease.Warm(), tc.wantKind, tc.wantWarm)
			}
			if got, want := lease.Sandbox.ID(), "fake-0001"; got != want {
				t.Errorf("sandbox = %q, want %q", got, want)
			}
			s := stats(m, "python")
			if s.Hits != tc.wantHits || s.Misses != tc.wantMisses || s.InUse != 1 {
				t.Errorf("hits, misses, in use = %d, %d, %d; want %d, %d, 1", s.Hits, s.Misses, s.InUse, tc.wantHits, tc.wantMisses)
			}
		})
	}
}

func TestAcquireRefills(t *testing.T) {
	rt := &runnertest.Runtime{}
	m := newManager(t, rt, pool.Config{Templates: []pool.Template{tmpl("python", 2)}})
	waitFor(t, "pool filled", readyCount(m, "python"))

	lease, err := m.Acquire(t.Context(), "python")
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	waitFor(t, "refill", func() bool { return rt.Started() == 3 })
	waitFor(t, "ready again", readyCount(m, "python"))
	m.Release(lease.Sandbox)
	waitFor(t, "released sandbox destroyed", func() bool { return rt.Destroyed() == 1 })

	if got, want := rt.Sandboxes()[0].Destroyed(), true; got != want {
		t.Errorf("first sandbox destroyed = %v, want %v", got, want)
	}
	s := stats(m, "python")
	if s.Ready != 2 || s.InUse != 0 || s.Hits != 1 {
		t.Errorf("ready, in use, hits = %d, %d, %d; want 2, 0, 1", s.Ready, s.InUse, s.Hits)
	}
}

func TestAcquireSkipsDeadSandbox(t *testing.T) {
	rt := &runnertest.Runtime{}
	m := newManager(t, rt, pool.Config{Templates: []pool.Template{tmpl("python", 1)}})
	waitFor(t, "pool filled", readyCount(m, "python"))

	dead := rt.Sandboxes()[0]
	dead.Kill()
	lease, err := m.Acquire(t.Context(), "python")
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	defer m.Release(lease.Sandbox)
	if lease.Sandbox.ID() == dead.ID() {
		t.Fatalf("Acquire returned the dead sandbox %s", dead.ID())
	}
	select {
	case <-lease.Sandbox.Done():
		t.Error("Acquire returned a dead sandbox")
	default:
	}
	waitFor(t, "dead sandbox destroyed", dead.Destroyed)
}

func TestDeadReadySandboxIsReplaced(t *testing.T) {
	rt := &runnertest.Runtime{}
	m := newManager(t, rt, pool.Config{Templates: []pool.Template{tmpl("python", 1)}})
	waitFor(t, "pool filled", readyCount(m, "python"))

	rt.Sandboxes()[0].Kill()
	waitFor(t, "dead sandbox destroyed", rt.Sandboxes()[0].Destroyed)
	waitFor(t, "replacement started", func() bool { return rt.Started() == 2 })
	waitFor(t, "pool filled again", readyCount(m, "python"))
}

func TestAcquireErrors(t *testing.T) {
	errBoom := errors.New("runsc exploded")
	tests := []struct {
		name     string
		template string
		cfg      pool.Config
		start    runnertest.StartFunc
		timeout  time.Duration
		want     error
	}{
		{
			name:     "unknown template",
			template: "cobol",
			want:     pool.ErrUnknownTemplate,
		},
		{
			name:     "slow cold start ends with ctx",
			template: "python",
			start: func(ctx context.Context, _ runner.Spec) (runner.Sandbox, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			},
			timeout: 20 * time.Millisecond,
			want:    context.DeadlineExceeded,
		},
		{
			name:     "start timeout",
			template: "python",
			cfg:      pool.Config{StartTimeout: 20 * time.Millisecond},
			start: func(ctx context.Context, _ runner.Spec) (runner.Sandbox, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			},
			timeout: time.Minute,
			want:    context.DeadlineExceeded,
		},
		{
			name:     "start failure",
			template: "python",
			start: func(context.Context, runner.Spec) (runner.Sandbox, error) {
				return nil, errBoom
			},
			timeout: time.Minute,
			want:    errBoom,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := &runnertest.Runtime{StartFunc: tc.start}
			cfg := tc.cfg
			cfg.Templates = []pool.Template{tmpl("python", 0)}
			m := newManager(t, rt, cfg)
			ctx := t.Context()
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			lease, err := m.Acquire(ctx, tc.template)
			if err == nil {
				m.Release(lease.Sandbox)
				t.Fatal("Acquire succeeded, want an error")
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("Acquire error = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestColdStartsAreBounded(t *testing.T) {
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
	m := newManager(t, rt, pool.Config{Templates: []pool.Template{tmpl("python", 0)}, StartBudget: 1})

	first := make(chan pool.Lease, 1)
	go func() {
		lease, err := m.Acquire(context.Background(), "python")
		if err != nil {
			t.Errorf("first Acquire: %v", err)
		}
		first <- lease
	}()
	waitFor(t, "first cold start begun", func() bool { return rt.Starts() == 1 })

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := m.Acquire(ctx, "python"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("second Acquire error = %v, want DeadlineExceeded", err)
	}
	if got := rt.Starts(); got != 1 {
		t.Errorf("Starts = %d, want 1 (second waited for a cold slot)", got)
	}
	close(gate)
	if lease := <-first; lease.Sandbox != nil {
		m.Release(lease.Sandbox)
	}
}
