package runnertest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

func TestSandboxContract(t *testing.T) {
	rt := &runnertest.Runtime{}
	sb, err := rt.Start(t.Context(), runner.Spec{Template: "python"})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	if got, want := sb.ID(), "fake-0001"; got != want {
		t.Errorf("ID = %q, want %q", got, want)
	}
	var chunks []string
	res, err := sb.Run(t.Context(), runner.RunRequest{Code: "print(1)", MaxStdout: 5}, func(s runner.Stream, b []byte) {
		chunks = append(chunks, string(s)+":"+string(b))
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got, want := string(res.Stdout), "print"; got != want {
		t.Errorf("Stdout = %q, want %q", got, want)
	}
	if res.Reason != runner.ReasonOutputLimit || !res.StdoutTruncated {
		t.Errorf("Reason = %q, truncated = %v, want output_limit, true", res.Reason, res.StdoutTruncated)
	}
	if len(chunks) != 1 || chunks[0] != "stdout:print" {
		t.Errorf("chunks = %q, want [stdout:print]", chunks)
	}
	if _, err := sb.Run(t.Context(), runner.RunRequest{Code: "x"}, nil); !errors.Is(err, runner.ErrUsed) {
		t.Errorf("second Run error = %v, want ErrUsed", err)
	}
	if got := rt.Live(); got != 1 {
		t.Errorf("Live = %d, want 1", got)
	}
	for range 2 {
		if err := sb.Destroy(t.Context()); err != nil {
			t.Fatalf("Destroy: %v", err)
		}
	}
	select {
	case <-sb.Done():
	default:
		t.Error("Done not closed after Destroy")
	}
	if got, want := [3]int{rt.Starts(), rt.Started(), rt.Destroyed()}, [3]int{1, 1, 1}; got != want {
		t.Errorf("starts, started, destroyed = %v, want %v", got, want)
	}
	if got := rt.Live(); got != 0 {
		t.Errorf("Live = %d, want 0", got)
	}
}

func TestRunOnDeadSandbox(t *testing.T) {
	tests := []struct {
		name string
		kill func(*runnertest.Sandbox)
	}{
		{name: "killed", kill: (*runnertest.Sandbox).Kill},
		{name: "destroyed", kill: func(s *runnertest.Sandbox) { _ = s.Destroy(context.Background()) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := &runnertest.Runtime{}
			sb := rt.NewSandbox(runner.Spec{})
			tc.kill(sb)
			if _, err := sb.Run(t.Context(), runner.RunRequest{}, nil); !errors.Is(err, runner.ErrSandboxLost) {
				t.Errorf("Run error = %v, want ErrSandboxLost", err)
			}
		})
	}
}

func TestRunFuncSeesDestroy(t *testing.T) {
	rt := &runnertest.Runtime{RunFunc: func(ctx context.Context, _ runner.RunRequest, _ runner.OutputFunc) (runner.RunResult, error) {
		<-ctx.Done()
		return runner.RunResult{}, runner.ErrSandboxLost
	}}
	sb := rt.NewSandbox(runner.Spec{})
	errc := make(chan error, 1)
	go func() {
		_, err := sb.Run(t.Context(), runner.RunRequest{}, nil)
		errc <- err
	}()
	if err := sb.Destroy(t.Context()); err != nil {
		t.Fatalf("Destroy: %v", err)
	}
	if err := <-errc; !errors.Is(err, runner.ErrSandboxLost) {
		t.Errorf("Run error = %v, want ErrSandboxLost", err)
	}
}

func TestStartDelayHonoursContext(t *testing.T) {
	rt := &runnertest.Runtime{StartDelay: time.Hour}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := rt.Start(ctx, runner.Spec{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Start error = %v, want context.Canceled", err)
	}
	if got, want := [2]int{rt.Starts(), rt.Started()}, [2]int{1, 0}; got != want {
		t.Errorf("starts, started = %v, want %v", got, want)
	}
}
