package core_test

import (
	"testing"
	"time"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
)

// The core's cost on a run and a cell, over the fake runtime: compare
// with the pool and kernels called directly (go test -bench . ./core/).
func BenchmarkRun(b *testing.B) {
	f := newFixture(b, core.Config{TenantRate: -1})
	in := core.RunInput{Language: "python", Code: "1", Env: map[string]string{"A": "b"}}
	b.Run("core", func(b *testing.B) {
		for b.Loop() {
			if _, err := f.svc.Run(b.Context(), core.Caller{Door: "bench"}, in, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	req := runner.RunRequest{Code: "1", Env: in.Env, Timeout: 30 * time.Second,
		MaxStdout: core.DefaultMaxOutputBytes, MaxStderr: core.DefaultMaxOutputBytes}
	b.Run("pool", func(b *testing.B) {
		for b.Loop() {
			if _, err := f.svc.Config().Pool.RunWith(b.Context(), "python", pool.RunOptions{}, req, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkExecute(b *testing.B) {
	f := newFixture(b, core.Config{TenantRate: -1})
	c := core.Caller{Door: "bench"}
	s, err := f.svc.CreateSession(b.Context(), c, core.SessionInput{Language: "python"})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("core", func(b *testing.B) {
		for b.Loop() {
			if _, err := f.svc.Execute(b.Context(), c, s.ID, core.ExecuteInput{Code: "x = 1"}, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("kernels", func(b *testing.B) {
		for b.Loop() {
			if _, err := f.kernels.Execute(b.Context(), "", s.ID, kernels.ExecuteOptions{Code: "x = 1"}, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
