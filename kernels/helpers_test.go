package kernels_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// t0 is the fake clock's start.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// clock is a fake clock tests move by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

type fixture struct {
	m     *kernels.Manager
	rt    *runnertest.Runtime
	pool  *pool.Manager
	clock *clock
}

// newFixture builds pool (templates python and node, no warm sandboxes)
// and kernels managers over rt with a fake clock unless cfg has one, and
// closes both at cleanup, checking that no sandbox leaked.
func newFixture(t *testing.T, rt *runnertest.Runtime, cfg kernels.Config) *fixture {
	t.Helper()
	return newFixtureWith(t, rt, pool.Config{Templates: []pool.Template{
		{Name: "python", Spec: runner.Spec{Language: "python"}},
		{Name: "node", Spec: runner.Spec{Language: "node"}},
	}}, cfg)
}

// newFixtureWith is newFixture over a pool configured by pc.
func newFixtureWith(t *testing.T, rt *runnertest.Runtime, pc pool.Config, cfg kernels.Config) *fixture {
	t.Helper()
	p, err := pool.New(rt, pc, nil)
	if err != nil {
		t.Fatalf("pool.New: %v", err)
	}
	p.Start()
	c := &clock{now: t0}
	if cfg.Now == nil {
		cfg.Now = c.Now
	}
	m, err := kernels.New(p, cfg, nil)
	if err != nil {
		t.Fatalf("kernels.New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Errorf("kernels Close: %v", err)
		}
		if err := p.Close(ctx); err != nil {
			t.Errorf("pool Close: %v", err)
		}
		if live := rt.Live(); live != 0 {
			t.Errorf("Live after Close = %d, want 0", live)
		}
	})
	return &fixture{m: m, rt: rt, pool: p, clock: c}
}

func (f *fixture) create(t *testing.T, owner string, o kernels.CreateOptions) kernels.Info {
	t.Helper()
	if o.Template == "" {
		o.Template = "python"
	}
	info, err := f.m.Create(t.Context(), owner, o)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return info
}

// kernel returns the fake kernel of the session's sandbox.
func (f *fixture) kernel(t *testing.T, info kernels.Info) *runnertest.Kernel {
	t.Helper()
	for _, sb := range f.rt.Sandboxes() {
		if sb.ID() == info.SandboxID {
			return sb.Kernel()
		}
	}
	t.Fatalf("no sandbox %s", info.SandboxID)
	return nil
}

type result struct {
	res kernels.Execution
	err error
}

// goExecute runs Execute in the background.
func (f *fixture) goExecute(ctx context.Context, owner, id string, o kernels.ExecuteOptions) <-chan result {
	ch := make(chan result, 1)
	go func() {
		res, err := f.m.Execute(ctx, owner, id, o, nil)
		ch <- result{res, err}
	}()
	return ch
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	// The bound is a safety net, not a speed the machine must reach.
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func state(m *kernels.Manager, owner, id string) func() string {
	return func() string {
		info, err := m.Get(owner, id)
		if err != nil {
			return err.Error()
		}
		return info.State
	}
}

func isErr(err, target error) bool { return errors.Is(err, target) }

// refuseStarts makes rt's starts fail once the returned flag is set: a
// session whose kernel then dies gets no fresh one and is lost. Call it
// before the first start.
func refuseStarts(rt *runnertest.Runtime) *atomic.Bool {
	refuse := new(atomic.Bool)
	next := rt.StartFunc
	rt.StartFunc = func(ctx context.Context, spec runner.Spec) (runner.Sandbox, error) {
		if refuse.Load() {
			return nil, errors.New("fake start refused")
		}
		if next != nil {
			return next(ctx, spec)
		}
		return rt.NewSandbox(spec), nil
	}
	return refuse
}

// lose kills the session's kernel with starts refused, so that the
// session is lost, and waits until it is.
func (f *fixture) lose(t *testing.T, refuse *atomic.Bool, owner string, info kernels.Info) {
	t.Helper()
	refuse.Store(true)
	f.kernel(t, info).Lose()
	waitFor(t, "the session to be lost", func() bool { return state(f.m, owner, info.ID)() == kernels.StateLost })
}
