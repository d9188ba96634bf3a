package pool_test

import (
	"context"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
)

// liveRuntime is a fake runtime that counts its live sandboxes.
type liveRuntime interface {
	runner.Runtime
	Live() int
}

// newManager builds and starts a manager over rt and closes it at cleanup,
// checking that nothing leaked.
func newManager(t *testing.T, rt liveRuntime, cfg pool.Config) *pool.Manager {
	t.Helper()
	m, err := pool.New(rt, cfg, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	m.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		if live := rt.Live(); live != 0 {
			t.Errorf("Live after Close = %d, want 0", live)
		}
	})
	return m
}

func tmpl(name string, size int) pool.Template {
	return pool.Template{Name: name, Spec: runner.Spec{Language: "python"}, Size: size}
}

// waitFor polls cond until it holds or the test has waited a minute.
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

func stats(m *pool.Manager, template string) pool.Stats {
	for _, s := range m.Stats() {
		if s.Template == template {
			return s
		}
	}
	return pool.Stats{}
}

func readyCount(m *pool.Manager, template string) func() bool {
	want := -1
	for _, s := range m.Stats() {
		if s.Template == template {
			want = s.Target
		}
	}
	return func() bool { return stats(m, template).Ready == want }
}
