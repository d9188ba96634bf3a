package kernels_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

func TestCloseReleasesAll(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, kernels.Config{})
	f.m.Start()
	var ids []string
	for range 3 {
		ids = append(ids, f.create(t, "", kernels.CreateOptions{}).ID)
	}
	busy, _ := f.m.Get("", ids[0])
	k := f.kernel(t, busy)
	running := f.goExecute(t.Context(), "", ids[0], kernels.ExecuteOptions{Code: "sleep 1h"})
	waitFor(t, "cell running", k.Running)

	var wg sync.WaitGroup
	for range 3 { // concurrent Close calls are safe
		wg.Go(func() {
			if err := f.m.Close(t.Context()); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
	wg.Wait()
	waitFor(t, "every sandbox released", func() bool { return f.rt.Live() == 0 })
	if o := <-running; !errors.Is(o.err, kernels.ErrSessionNotFound) {
		t.Errorf("running cell error = %v, want ErrSessionNotFound", o.err)
	}
	if got := f.m.List(""); len(got) != 0 {
		t.Errorf("List after Close = %+v, want none", got)
	}
	if _, err := f.m.Create(t.Context(), "", kernels.CreateOptions{Template: "python"}); !errors.Is(err, kernels.ErrClosed) {
		t.Errorf("Create after Close: error = %v, want ErrClosed", err)
	}
	f.m.Start() // a no-op after Close
}

// Close interrupts a Create waiting for a sandbox and releases what it got.
func TestCloseDuringCreate(t *testing.T) {
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
	f := newFixture(t, rt, kernels.Config{})
	errc := make(chan error, 1)
	go func() {
		_, err := f.m.Create(context.Background(), "", kernels.CreateOptions{Template: "python"})
		errc <- err
	}()
	waitFor(t, "create waiting for a sandbox", func() bool { return rt.Starts() == 1 })
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a safety net only
	defer cancel()
	if err := f.m.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-errc; !errors.Is(err, kernels.ErrClosed) {
		t.Errorf("Create error = %v, want ErrClosed", err)
	}
	close(gate)
}

func TestDeleteWhileExecuting(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, kernels.Config{})
	info := f.create(t, "", kernels.CreateOptions{})
	k := f.kernel(t, info)
	running := f.goExecute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "sleep 1h"})
	waitFor(t, "cell running", k.Running)
	queued := f.goExecute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "1", Queue: true})
	waitFor(t, "a call queued", func() bool { got, _ := f.m.Get("", info.ID); return got.Queued == 1 })
	if err := f.m.Delete(t.Context(), "", info.ID); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	for name, ch := range map[string]<-chan result{"running": running, "queued": queued} {
		if o := <-ch; !errors.Is(o.err, kernels.ErrSessionNotFound) {
			t.Errorf("%s call error = %v, want ErrSessionNotFound", name, o.err)
		}
	}
	waitFor(t, "sandbox released", func() bool { return f.rt.Live() == 0 })
	if err := f.m.Delete(t.Context(), "", info.ID); !errors.Is(err, kernels.ErrSessionNotFound) {
		t.Errorf("second Delete error = %v, want ErrSessionNotFound", err)
	}
}
