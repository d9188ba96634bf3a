package kernels_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

func TestExecuteKeepsState(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, kernels.Config{MaxOutput: 100, DefaultTimeout: 5 * time.Second})
	info := f.create(t, "", kernels.CreateOptions{TTL: time.Minute})

	var events []runner.Event
	f.clock.Advance(10 * time.Second)
	res, err := f.m.Execute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "x = 41\nprint hi\nx", Env: map[string]string{"E": "1"}},
		func(e runner.Event) { events = append(events, e) })
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	wantEvents := []runner.Event{
		{Type: runner.EventStream, Stream: runner.Stdout, Text: "hi\n"},
		{Type: runner.EventExecuteResult, Data: map[string]any{"text/plain": "41"}, ExecutionCount: 1},
	}
	if !reflect.DeepEqual(events, wantEvents) {
		t.Errorf("events = %+v\nwant     %+v", events, wantEvents)
	}
	if want := (runner.ExecuteResult{ExecutionCount: 1, Status: "ok", Reason: "ok", Exec: time.Millisecond}); !reflect.DeepEqual(res.ExecuteResult, want) {
		t.Errorf("result = %+v, want %+v", res.ExecuteResult, want)
	}
	if res.Template != "python" || res.Start != info.Start || res.Start == "" {
		t.Errorf("execution's template %q, start %q; want python and the session's start %q", res.Template, res.Start, info.Start)
	}
	wantReq := runner.ExecuteRequest{Code: "x = 41\nprint hi\nx", Timeout: 5 * time.Second, Env: map[string]string{"E": "1"}, MaxOutput: 100}
	if got := f.kernel(t, info).Requests(); len(got) != 1 || !reflect.DeepEqual(got[0], wantReq) {
		t.Errorf("kernel requests = %+v, want [%+v]", got, wantReq)
	}

	res, err = f.m.Execute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "raise NameError: y", Timeout: time.Second}, nil)
	if err != nil || res.Status != "error" || res.Error == nil || res.Error.Name != "NameError" || res.ExecutionCount != 2 {
		t.Errorf("failing cell = %+v, %v; want an error result at count 2", res, err)
	}
	got, err := f.m.Get("", info.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := kernels.Info{ID: info.ID, Template: "python", SandboxID: "fake-0001", CreatedAt: t0,
		LastUsed: t0.Add(10 * time.Second), ExpiresAt: t0.Add(70 * time.Second), TTL: time.Minute, ExecutionCount: 2, State: "idle",
		Start: got.Start, Opening: got.Opening}
	if got != want {
		t.Errorf("Get = %+v\nwant  %+v", got, want)
	}
}

func TestExecuteTimeoutValidation(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, kernels.Config{MaxTimeout: time.Minute, DefaultTimeout: 10 * time.Second})
	info := f.create(t, "", kernels.CreateOptions{})
	for _, d := range []time.Duration{-time.Millisecond, time.Minute + 1} {
		_, err := f.m.Execute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "1", Timeout: d}, nil)
		want := "timeout must be between 1ms and 1m0s, or 0 for the default (10s); got " + d.String()
		if !errors.Is(err, kernels.ErrInvalid) || err.Error() != want {
			t.Errorf("Timeout %s: error = %v, want ErrInvalid %q", d, err, want)
		}
	}
}

func TestBusyAndQueue(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, kernels.Config{MaxQueue: 1})
	info := f.create(t, "", kernels.CreateOptions{})
	k := f.kernel(t, info)
	first := f.goExecute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "sleep 1h"})
	waitFor(t, "first cell running", k.Running)
	if got := state(f.m, "", info.ID)(); got != "busy" {
		t.Errorf("State = %q, want busy", got)
	}

	_, err := f.m.Execute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "1"}, nil)
	if !errors.Is(err, kernels.ErrBusy) {
		t.Errorf("concurrent Execute error = %v, want ErrBusy", err)
	}
	queued := f.goExecute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "queued", Queue: true})
	waitFor(t, "second call queued", func() bool { got, _ := f.m.Get("", info.ID); return got.Queued == 1 })
	queuedAt := time.Now()
	if _, err := f.m.Execute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "2", Queue: true}, nil); !errors.Is(err, kernels.ErrBusy) {
		t.Errorf("Execute with a full queue: error = %v, want ErrBusy", err)
	}
	// A queued call whose caller gives up leaves the line without harm.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := f.m.Execute(ctx, "", info.ID, kernels.ExecuteOptions{Code: "3", Queue: true}, nil); !errors.Is(err, kernels.ErrBusy) && !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled queued Execute error = %v", err)
	}

	// The queued call was in line before queuedAt and gets its turn only
	// after the interrupt: it waited at least this long.
	waited := time.Since(queuedAt)
	if err := f.m.Interrupt(t.Context(), "", info.ID); err != nil {
		t.Fatalf("Interrupt: %v", err)
	}
	if o := <-first; o.err != nil || o.res.Reason != runner.ReasonInterrupted {
		t.Errorf("first cell = %+v, %v; want interrupted", o.res, o.err)
	}
	if o := <-queued; o.err != nil || o.res.Status != "ok" || o.res.ExecutionCount != 2 {
		t.Errorf("queued cell = %+v, %v; want ok at count 2", o.res, o.err)
	} else if o.res.Queue < waited {
		t.Errorf("queued cell's Queue = %v, want at least the %v it was seen waiting", o.res.Queue, waited)
	}
	waitFor(t, "idle", func() bool { return state(f.m, "", info.ID)() == "idle" })
	if got := k.Overlaps(); got != 0 {
		t.Errorf("kernel saw %d overlapping calls", got)
	}
}

func TestQueueWaitEndsWithContext(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, kernels.Config{})
	info := f.create(t, "", kernels.CreateOptions{})
	k := f.kernel(t, info)
	first := f.goExecute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "sleep 1h"})
	waitFor(t, "cell running", k.Running)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := f.m.Execute(ctx, "", info.ID, kernels.ExecuteOptions{Code: "1", Queue: true}, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("queued Execute error = %v, want DeadlineExceeded", err)
	}
	if err := f.m.Interrupt(t.Context(), "", info.ID); err != nil {
		t.Fatal(err)
	}
	<-first
	if _, err := f.m.Execute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "1"}, nil); err != nil {
		t.Errorf("Execute after the abandoned wait: %v (turn leaked?)", err)
	}
}

// A caller that goes away mid-cell interrupts the cell; the session stays
// usable.
func TestCancelInterrupts(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, kernels.Config{})
	info := f.create(t, "", kernels.CreateOptions{})
	k := f.kernel(t, info)
	ctx, cancel := context.WithCancel(t.Context())
	done := f.goExecute(ctx, "", info.ID, kernels.ExecuteOptions{Code: "sleep 1h"})
	waitFor(t, "cell running", k.Running)
	cancel()
	o := <-done
	if !errors.Is(o.err, context.Canceled) || o.res.Reason != runner.ReasonInterrupted {
		t.Errorf("Execute = %+v, %v; want interrupted and context.Canceled", o.res, o.err)
	}
	if got := k.Interrupts(); got != 1 {
		t.Errorf("Interrupts = %d, want 1", got)
	}
	if res, err := f.m.Execute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "1"}, nil); err != nil || res.ExecutionCount != 2 {
		t.Errorf("next Execute = %+v, %v; want ok at count 2", res, err)
	}
}

func TestRestart(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, kernels.Config{})
	info := f.create(t, "", kernels.CreateOptions{})
	k := f.kernel(t, info)
	if _, err := f.m.Execute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "x = 1"}, nil); err != nil {
		t.Fatal(err)
	}
	running := f.goExecute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "sleep 1h"})
	waitFor(t, "cell running", k.Running)
	queued := f.goExecute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "x", Queue: true})
	waitFor(t, "a call queued", func() bool { got, _ := f.m.Get("", info.ID); return got.Queued == 1 })

	got, err := f.m.Restart(t.Context(), "", info.ID)
	if err != nil {
		t.Fatalf("Restart: %v", err)
	}
	if got.ID != info.ID || got.ExecutionCount != 0 || got.State != "busy" && got.State != "idle" {
		t.Errorf("Restart = %+v, want the same id at count 0", got)
	}
	if o := <-running; o.res.Reason != runner.ReasonInterrupted {
		t.Errorf("running cell = %+v, %v; want interrupted by the restart", o.res, o.err)
	}
	// The queued cell ran after the restart, on a fresh interpreter.
	o := <-queued
	if o.err != nil || o.res.ExecutionCount != 1 {
		t.Errorf("queued cell = %+v, %v; want count 1 after restart", o.res, o.err)
	}
	if got := [3]int{k.Restarts(), k.Interrupts(), k.Overlaps()}; got != [3]int{1, 1, 0} {
		t.Errorf("restarts, interrupts, overlaps = %v, want [1 1 0]", got)
	}
}
