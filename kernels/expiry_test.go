package kernels_test

import (
	"errors"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

func TestIdleTTL(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, kernels.Config{})
	info := f.create(t, "", kernels.CreateOptions{TTL: time.Minute})

	f.clock.Advance(59 * time.Second)
	if _, err := f.m.Execute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "1"}, nil); err != nil {
		t.Fatalf("Execute before expiry: %v", err)
	}
	f.clock.Advance(59 * time.Second) // 118 s after creation, 59 s idle
	got, err := f.m.Get("", info.ID)
	if err != nil {
		t.Fatalf("Get after a refreshing use: %v", err)
	}
	if want := t0.Add(119 * time.Second); !got.ExpiresAt.Equal(want) {
		t.Errorf("ExpiresAt = %s, want %s", got.ExpiresAt, want)
	}
	f.clock.Advance(time.Second)
	if _, err := f.m.Get("", info.ID); !errors.Is(err, kernels.ErrSessionNotFound) {
		t.Errorf("Get after the TTL: error = %v, want ErrSessionNotFound", err)
	}
	// Gone before any reaper ran, and its sandbox with it.
	waitFor(t, "sandbox released", func() bool { return f.rt.Live() == 0 })
	if _, err := f.m.Execute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "1"}, nil); !errors.Is(err, kernels.ErrSessionNotFound) {
		t.Errorf("Execute after the TTL: error = %v, want ErrSessionNotFound", err)
	}
}

func TestMaxLifetime(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, kernels.Config{MaxLifetime: time.Hour})
	info := f.create(t, "", kernels.CreateOptions{TTL: time.Minute})
	for range 61 { // used every 59 s up to 59m59s
		f.clock.Advance(time.Minute - time.Second)
		if _, err := f.m.Get("", info.ID); err != nil {
			t.Fatalf("Get: %v", err)
		}
		if err := f.m.WriteFile(t.Context(), "", info.ID, "keepalive", nil); err != nil {
			t.Fatalf("WriteFile: %v", err)
		}
	}
	got, _ := f.m.Get("", info.ID)
	if want := t0.Add(time.Hour); !got.ExpiresAt.Equal(want) {
		t.Errorf("ExpiresAt = %s, want the lifetime's end %s", got.ExpiresAt, want)
	}
	f.clock.Advance(time.Minute)
	if err := f.m.WriteFile(t.Context(), "", info.ID, "x", nil); !errors.Is(err, kernels.ErrSessionNotFound) {
		t.Errorf("use past MaxLifetime: error = %v, want ErrSessionNotFound", err)
	}
}

func TestReaperReleasesSandboxes(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, kernels.Config{ReapInterval: time.Millisecond})
	f.m.Start()
	short := f.create(t, "", kernels.CreateOptions{TTL: time.Minute})
	long := f.create(t, "", kernels.CreateOptions{TTL: time.Hour})
	if got := f.rt.Live(); got != 2 {
		t.Fatalf("Live = %d, want 2", got)
	}
	f.clock.Advance(time.Minute)
	waitFor(t, "reaper released the expired sandbox", func() bool { return f.rt.Live() == 1 })
	list := f.m.List("")
	if len(list) != 1 || list[0].ID != long.ID {
		t.Errorf("List = %+v, want only %s", list, long.ID)
	}
	if _, err := f.m.Get("", short.ID); !errors.Is(err, kernels.ErrSessionNotFound) {
		t.Errorf("Get of the reaped session: error = %v, want ErrSessionNotFound", err)
	}
}

// A session is never reaped while it executes, however long it runs.
func TestNoReapWhileExecuting(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, kernels.Config{MaxLifetime: time.Hour})
	info := f.create(t, "", kernels.CreateOptions{TTL: time.Minute})
	k := f.kernel(t, info)
	running := f.goExecute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "sleep 1h"})
	waitFor(t, "cell running", k.Running)
	f.clock.Advance(24 * time.Hour)
	if n := f.m.ReapNow(); n != 0 {
		t.Errorf("reaped %d sessions while one executed", n)
	}
	if got := state(f.m, "", info.ID)(); got != "busy" {
		t.Errorf("State = %q, want busy", got)
	}
	if err := f.m.Interrupt(t.Context(), "", info.ID); err != nil {
		t.Fatal(err)
	}
	if o := <-running; o.err != nil {
		t.Fatalf("cell: %v", o.err)
	}
	// Past MaxLifetime, the session goes once it is idle.
	if n := f.m.ReapNow(); n != 1 {
		t.Errorf("reaped %d after the cell ended, want 1", n)
	}
	waitFor(t, "sandbox released", func() bool { return f.rt.Live() == 0 })
}
