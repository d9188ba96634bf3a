package kernels_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// A kernel that dies, with a cell or between cells, is replaced by a fresh
// one of the same template on a fresh sandbox: the answer says the state
// is gone and why, and the next cell runs under the same session id at
// count 1, without the old variables.
func TestDeadKernelIsReplaced(t *testing.T) {
	tests := []struct {
		name string
		// kill ends the kernel and returns the answer that must say so.
		kill       func(t *testing.T, f *fixture, k *runnertest.Kernel, id string) (kernels.Execution, error)
		wantReason runner.Reason
		wantWhy    string
		// idle: the answer is the next cell's, run on the fresh kernel.
		idle bool
	}{
		{
			name: "a stuck cell is killed at its timeout",
			kill: func(t *testing.T, f *fixture, _ *runnertest.Kernel, id string) (kernels.Execution, error) {
				return f.m.Execute(t.Context(), "", id, kernels.ExecuteOptions{Code: "hang", Timeout: time.Millisecond}, nil)
			},
			wantReason: runner.ReasonTimeout,
			wantWhy:    "the cell did not stop when interrupted at its timeout, so its kernel was killed",
		},
		{
			name: "the cell kills the interpreter",
			kill: func(t *testing.T, f *fixture, _ *runnertest.Kernel, id string) (kernels.Execution, error) {
				return f.m.Execute(t.Context(), "", id, kernels.ExecuteOptions{Code: "die"}, nil)
			},
			wantReason: runner.ReasonKernelLost,
			wantWhy:    "the kernel died during the cell",
		},
		{
			name: "out of memory",
			kill: func(t *testing.T, f *fixture, _ *runnertest.Kernel, id string) (kernels.Execution, error) {
				return f.m.Execute(t.Context(), "", id, kernels.ExecuteOptions{Code: "oom"}, nil)
			},
			wantReason: runner.ReasonOOM,
			wantWhy:    "the kernel ran out of memory",
		},
		{
			name: "the kernel reports kernel_lost",
			kill: func(t *testing.T, f *fixture, k *runnertest.Kernel, id string) (kernels.Execution, error) {
				k.ExecuteFunc = func(context.Context, runner.ExecuteRequest, func(runner.Event)) (runner.ExecuteResult, error) {
					return runner.ExecuteResult{Status: "aborted", Reason: runner.ReasonKernelLost}, nil
				}
				return f.m.Execute(t.Context(), "", id, kernels.ExecuteOptions{Code: "x"}, nil)
			},
			wantReason: runner.ReasonKernelLost,
			wantWhy:    "the kernel died during the cell",
		},
		{
			name: "the interpreter dies between cells",
			kill: func(t *testing.T, f *fixture, k *runnertest.Kernel, id string) (kernels.Execution, error) {
				k.Lose()
				waitFor(t, "a fresh kernel", func() bool { got, _ := f.m.Get("", id); return got.Restarts == 1 })
				return f.m.Execute(t.Context(), "", id, kernels.ExecuteOptions{Code: "x"}, nil)
			},
			wantReason: runner.ReasonOK,
			wantWhy:    "the kernel died between cells",
			idle:       true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, &runnertest.Runtime{}, kernels.Config{})
			info := f.create(t, "", kernels.CreateOptions{TTL: time.Minute, Env: map[string]string{"E": "1"}})
			k := f.kernel(t, info)
			if _, err := f.m.Execute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "x = 1"}, nil); err != nil {
				t.Fatal(err)
			}
			x, err := tc.kill(t, f, k, info.ID)
			if err != nil || x.Reason != tc.wantReason || !x.StateLost || !x.Restarted || x.LostReason != tc.wantWhy {
				t.Fatalf("answer = %+v, %v; want reason %s, state lost (%q), restarted", x, err, tc.wantReason, tc.wantWhy)
			}
			if !tc.idle && !x.Lost {
				t.Errorf("answer's Lost is false; the kernel died with the cell")
			}

			// The old sandbox is gone, the session goes on with a fresh one.
			waitFor(t, "the old sandbox destroyed", func() bool { return f.rt.Live() == 1 })
			got, err := f.m.Get("", info.ID)
			if err != nil || got.State != kernels.StateIdle || got.Restarts != 1 || got.SandboxID == info.SandboxID ||
				got.TTL != time.Minute || !got.CreatedAt.Equal(info.CreatedAt) || got.LostReason != "" {
				t.Errorf("Get = %+v, %v; want idle on a new sandbox, 1 restart, the same TTL and creation", got, err)
			}
			if opts := f.kernel(t, got).Options; opts.Env["E"] != "1" {
				t.Errorf("fresh kernel opened with %+v, want the session's env", opts)
			}
			wantCount := 1
			if tc.idle {
				wantCount = 2 // the answer above was count 1 on the fresh kernel
			}
			next, err := f.m.Execute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "x"}, nil)
			if err != nil || next.Status != runner.StatusOK || next.StateLost || next.ExecutionCount != wantCount {
				t.Errorf("next cell = %+v, %v; want ok at count %d, state kept", next, err, wantCount)
			}
			if got := k.Restarts(); got != 0 {
				t.Errorf("the dead kernel was restarted in place %d times", got)
			}
			if got := f.rt.Started(); got != 2 {
				t.Errorf("sandboxes started = %d, want 2", got)
			}
		})
	}
}

// The fresh kernel forgets the old one's variables: the fake's "x" reads
// back as its own text once x is unset.
func TestReplacedKernelForgetsState(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, kernels.Config{})
	info := f.create(t, "", kernels.CreateOptions{})
	if x, err := f.m.Execute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "x = 41\nx"}, nil); err != nil || x.ExecutionCount != 1 {
		t.Fatalf("first cell = %+v, %v", x, err)
	}
	if x, err := f.m.Execute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "hang", Timeout: time.Millisecond}, nil); err != nil || !x.Restarted {
		t.Fatalf("stuck cell = %+v, %v; want a restart", x, err)
	}
	var events []runner.Event
	x, err := f.m.Execute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "x"}, func(e runner.Event) { events = append(events, e) })
	if err != nil || x.ExecutionCount != 1 || len(events) != 1 || events[0].Data["text/plain"] != "x" {
		t.Errorf("x after the restart = %+v, %v, events %+v; want the unset name at count 1", x, err, events)
	}
}

// A kernel that ignores its own timeout and the interrupt is abandoned and
// replaced; its late events go nowhere.
func TestUnresponsiveKernelIsReplaced(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{KernelFunc: func(_ context.Context, _ runner.KernelOptions, k *runnertest.Kernel) error {
		k.ExecuteFunc = func(_ context.Context, req runner.ExecuteRequest, events func(runner.Event)) (runner.ExecuteResult, error) {
			if req.Code != "wedge" {
				return runner.ExecuteResult{Status: runner.StatusOK, Reason: runner.ReasonOK}, nil
			}
			<-k.Lost() // wedged until killed
			events(runner.Event{Type: runner.EventStream, Stream: runner.Stdout, Text: "late"})
			return runner.ExecuteResult{}, runner.ErrKernelLost
		}
		k.InterruptFunc = func(context.Context) error { return nil }
		return nil
	}}, kernels.Config{})
	f.m.SetExecuteSlack(10 * time.Millisecond)
	info := f.create(t, "", kernels.CreateOptions{})
	var mu sync.Mutex
	var events []runner.Event
	x, err := f.m.Execute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "wedge", Timeout: time.Millisecond}, func(e runner.Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	})
	want := "the kernel did not end the cell within 10ms of its timeout, so its sandbox was abandoned"
	if err != nil || x.Reason != runner.ReasonTimeout || !x.StateLost || !x.Restarted || x.LostReason != want {
		t.Errorf("Execute = %+v, %v; want timeout, state lost (%q), restarted", x, err, want)
	}
	waitFor(t, "the wedged sandbox destroyed", func() bool { return f.rt.Live() == 1 })
	if x, err := f.m.Execute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "1"}, nil); err != nil || x.Status != runner.StatusOK {
		t.Errorf("next cell = %+v, %v; want ok", x, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 0 {
		t.Errorf("events after Execute returned: %+v", events)
	}
}

// When no fresh kernel can be had the session is lost, and every call but
// Get and Delete says why.
func TestNoFreshKernelLosesSession(t *testing.T) {
	rt := &runnertest.Runtime{}
	refuse := refuseStarts(rt)
	f := newFixture(t, rt, kernels.Config{})
	info := f.create(t, "", kernels.CreateOptions{})
	refuse.Store(true)
	x, err := f.m.Execute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "hang", Timeout: time.Millisecond}, nil)
	why := "the cell did not stop when interrupted at its timeout, so its kernel was killed; " +
		"no fresh kernel could be had: its sandbox or kernel failed to start"
	if err != nil || x.Reason != runner.ReasonTimeout || !x.StateLost || x.Restarted || x.LostReason != why {
		t.Fatalf("stuck cell = %+v, %v; want timeout, state lost, not restarted, %q", x, err, why)
	}
	got, err := f.m.Get("", info.ID)
	if err != nil || got.State != kernels.StateLost || got.LostReason != why {
		t.Errorf("Get = %+v, %v; want lost, %q", got, err, why)
	}
	waitFor(t, "sandbox released", func() bool { return f.rt.Live() == 0 })

	calls := map[string]error{}
	_, calls["Execute"] = f.m.Execute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "x"}, nil)
	calls["Interrupt"] = f.m.Interrupt(t.Context(), "", info.ID)
	_, calls["Restart"] = f.m.Restart(t.Context(), "", info.ID)
	calls["WriteFile"] = f.m.WriteFile(t.Context(), "", info.ID, "a", nil)
	_, calls["ReadFile"] = f.m.ReadFile(t.Context(), "", info.ID, "a", 1)
	_, calls["ListFiles"] = f.m.ListFiles(t.Context(), "", info.ID, "")
	for name, err := range calls {
		var lost *kernels.LostError
		if !errors.As(err, &lost) || !errors.Is(err, kernels.ErrSessionLost) || lost.Reason != why {
			t.Errorf("%s error = %v, want ErrSessionLost with the reason", name, err)
		}
	}
	if err := f.m.Delete(t.Context(), "", info.ID); err != nil {
		t.Errorf("Delete of a lost session: %v", err)
	}
	if _, err := f.m.Get("", info.ID); !errors.Is(err, kernels.ErrSessionNotFound) {
		t.Errorf("Get after Delete error = %v, want ErrSessionNotFound", err)
	}
}

// Kernels that keep dying of themselves are replaced a few times, then
// the session is lost rather than loop.
func TestKernelsDyingIdleLoseSession(t *testing.T) {
	var mu sync.Mutex
	opened := 0
	rt := &runnertest.Runtime{KernelFunc: func(_ context.Context, _ runner.KernelOptions, k *runnertest.Kernel) error {
		mu.Lock()
		defer mu.Unlock()
		opened++
		if opened > 1 {
			k.Lose() // every fresh kernel is dead on arrival
		}
		return nil
	}}
	f := newFixture(t, rt, kernels.Config{})
	info := f.create(t, "", kernels.CreateOptions{})
	f.kernel(t, info).Lose()
	waitFor(t, "the session to be lost", func() bool { return state(f.m, "", info.ID)() == kernels.StateLost })
	got, _ := f.m.Get("", info.ID)
	if !strings.Contains(got.LostReason, "not replaced again") || got.Restarts != 3 {
		t.Errorf("Get = %+v; want lost after 3 restarts, not replaced again", got)
	}
	if n := f.rt.Started(); n != 4 {
		t.Errorf("sandboxes started = %d, want 4", n)
	}
}

// Restart of a session whose kernel died opens a fresh kernel rather than
// failing.
func TestRestartReplacesDeadKernel(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{KernelFunc: func(_ context.Context, _ runner.KernelOptions, k *runnertest.Kernel) error {
		k.RestartFunc = func(context.Context) error {
			k.Lose()
			return runner.ErrKernelLost
		}
		return nil
	}}, kernels.Config{})
	info := f.create(t, "", kernels.CreateOptions{})
	got, err := f.m.Restart(t.Context(), "", info.ID)
	if err != nil || got.Restarts != 1 || got.SandboxID == info.SandboxID || got.ExecutionCount != 0 {
		t.Errorf("Restart = %+v, %v; want a fresh kernel on a new sandbox", got, err)
	}
	if x, err := f.m.Execute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "1"}, nil); err != nil || x.ExecutionCount != 1 || x.StateLost {
		t.Errorf("next cell = %+v, %v; want ok at count 1 (the restart's caller was told)", x, err)
	}
}

// A cell that would not wait for its turn waits behind the replacement of
// a dead kernel instead of finding the session busy.
func TestExecuteWaitsForReplacement(t *testing.T) {
	gate := make(chan struct{})
	rt := &runnertest.Runtime{}
	var mu sync.Mutex
	starts := 0
	rt.StartFunc = func(ctx context.Context, spec runner.Spec) (runner.Sandbox, error) {
		mu.Lock()
		starts++
		n := starts
		mu.Unlock()
		if n > 1 {
			select {
			case <-gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return rt.NewSandbox(spec), nil
	}
	f := newFixture(t, rt, kernels.Config{})
	info := f.create(t, "", kernels.CreateOptions{})
	f.kernel(t, info).Lose()
	waitFor(t, "the replacement to start", func() bool { mu.Lock(); defer mu.Unlock(); return starts == 2 })
	next := f.goExecute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "1"})
	waitFor(t, "the cell to wait", func() bool { got, _ := f.m.Get("", info.ID); return got.Queued == 1 })
	close(gate)
	o := <-next
	if o.err != nil || o.res.Status != runner.StatusOK || !o.res.StateLost || o.res.LostReason != "the kernel died between cells" {
		t.Errorf("cell behind the replacement = %+v, %v; want ok, telling the state was lost", o.res, o.err)
	}
}
