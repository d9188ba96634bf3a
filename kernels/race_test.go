package kernels_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// The reaper races executions on sessions whose TTL is about to run out:
// a session may expire between calls, but never during one, so no call
// sees its kernel die and no kernel sees overlapping cells.
func TestRaceReaperVsExecute(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, kernels.Config{ReapInterval: time.Millisecond, Now: time.Now})
	f.m.Start()
	var wg sync.WaitGroup
	for range 4 {
		info := f.create(t, "", kernels.CreateOptions{TTL: 2 * time.Millisecond})
		for range 3 {
			wg.Go(func() {
				for range 100 {
					res, err := f.m.Execute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "print x\nsleep 100us\nx", Queue: true}, nil)
					switch {
					case errors.Is(err, kernels.ErrSessionNotFound):
						return // expired between calls
					case err != nil:
						t.Errorf("Execute: %v", err)
						return
					case res.Status != "ok":
						t.Errorf("cell = %+v, want ok", res)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	for _, sb := range f.rt.Sandboxes() {
		if k := sb.Kernel(); k != nil && k.Overlaps() != 0 {
			t.Errorf("kernel of %s saw %d overlapping calls", sb.ID(), k.Overlaps())
		}
	}
	waitFor(t, "every session reaped", func() bool { return len(f.m.List("")) == 0 && f.rt.Live() == 0 })
}

// Creates, executions, deletes and Close race; nothing leaks (the fixture
// checks Live at cleanup) and every error is one of the documented ones.
func TestRaceCloseVsUse(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, kernels.Config{MaxSessions: 8})
	f.m.Start()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				info, err := f.m.Create(t.Context(), "", kernels.CreateOptions{Template: "python"})
				if err != nil {
					if !errors.Is(err, kernels.ErrClosed) && !errors.Is(err, kernels.ErrTooManySessions) {
						t.Errorf("Create: %v", err)
					}
					continue
				}
				_, err = f.m.Execute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "sleep 50us\n1"}, nil)
				if err != nil && !errors.Is(err, kernels.ErrSessionNotFound) {
					t.Errorf("Execute: %v", err)
				}
				if err := f.m.Delete(t.Context(), "", info.ID); err != nil && !errors.Is(err, kernels.ErrSessionNotFound) {
					t.Errorf("Delete: %v", err)
				}
			}
		})
	}
	time.Sleep(5 * time.Millisecond)
	if err := f.m.Close(t.Context()); err != nil {
		t.Errorf("Close: %v", err)
	}
	wg.Wait()
}
