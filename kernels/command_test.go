package kernels_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

func TestCommand(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, kernels.Config{DefaultTimeout: 20 * time.Second, MaxOutput: 1000})
	info := f.create(t, "alice", kernels.CreateOptions{})
	var out strings.Builder
	res, err := f.m.Command(t.Context(), "alice", info.ID, kernels.CommandOptions{Argv: []string{"echo", "hi"}, Env: map[string]string{"A": "1"}, Dir: "sub"},
		func(s runner.Stream, b []byte) { out.WriteString(string(s) + ":" + string(b)) })
	if err != nil {
		t.Fatal(err)
	}
	if want := (runner.CommandResult{PID: 101, Reason: runner.ReasonOK, Exec: runnertest.FakeExec}); res != want || out.String() != "stdout:hi\n" {
		t.Errorf("Command = %+v, output %q; want %+v, %q", res, out.String(), want, "stdout:hi\n")
	}
	res, err = f.m.Command(t.Context(), "alice", info.ID, kernels.CommandOptions{Argv: []string{"false"}, Timeout: time.Second, MaxOutput: 10}, nil)
	if err != nil || res.ExitCode != 1 || res.Reason != runner.ReasonError {
		t.Errorf("false: %+v, %v", res, err)
	}
	want := []runner.CommandRequest{
		{Argv: []string{"echo", "hi"}, Env: map[string]string{"A": "1"}, Dir: "sub", Timeout: 20 * time.Second, MaxStdout: 1000, MaxStderr: 1000},
		{Argv: []string{"false"}, Timeout: time.Second, MaxStdout: 10, MaxStderr: 10},
	}
	if got := f.kernel(t, info).Commands(); !reflect.DeepEqual(got, want) {
		t.Errorf("requests\n%+v\nwant\n%+v", got, want)
	}
}

func TestCommandRefused(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, kernels.Config{MaxTimeout: time.Minute, MaxOutput: 1000})
	info := f.create(t, "alice", kernels.CreateOptions{})
	tests := []struct {
		name    string
		owner   string
		o       kernels.CommandOptions
		wantErr error
		wantMsg string
	}{
		{name: "no argv", owner: "alice", wantErr: kernels.ErrInvalid, wantMsg: "a command is required"},
		{name: "empty program", owner: "alice", o: kernels.CommandOptions{Argv: []string{""}}, wantErr: kernels.ErrInvalid, wantMsg: "a command is required"},
		{name: "timeout too long", owner: "alice", o: kernels.CommandOptions{Argv: []string{"true"}, Timeout: 2 * time.Minute}, wantErr: kernels.ErrInvalid,
			wantMsg: "timeout must be between 1ms and 1m0s, or 0 for the default (30s); got 2m0s"},
		{name: "output cap too large", owner: "alice", o: kernels.CommandOptions{Argv: []string{"true"}, MaxOutput: 1001}, wantErr: kernels.ErrInvalid,
			wantMsg: "max_output_bytes must be between 1 and 1000, or 0 for the default (1000); got 1001"},
		{name: "negative output cap", owner: "alice", o: kernels.CommandOptions{Argv: []string{"true"}, MaxOutput: -1}, wantErr: kernels.ErrInvalid,
			wantMsg: "max_output_bytes must be between 1 and 1000, or 0 for the default (1000); got -1"},
		{name: "another owner's session", owner: "bob", o: kernels.CommandOptions{Argv: []string{"true"}}, wantErr: kernels.ErrSessionNotFound,
			wantMsg: "session " + info.ID + ": session not found"},
		{name: "a directory out of the workspace", owner: "alice", o: kernels.CommandOptions{Argv: []string{"true"}, Dir: "../x"}, wantErr: nil,
			wantMsg: `running a command in session ` + info.ID + `: command dir "../x": bad_path: fake kernel: path leaves the working directory`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.m.Command(t.Context(), tt.owner, info.ID, tt.o, nil)
			if err == nil || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) || err.Error() != tt.wantMsg {
				t.Fatalf("Command = %v, want %q (%v)", err, tt.wantMsg, tt.wantErr)
			}
		})
	}
	if n := len(f.kernel(t, info).Commands()); n != 1 {
		t.Errorf("the kernel got %d commands, want only the one with a bad directory", n)
	}
	if got := state(f.m, "alice", info.ID)(); got != kernels.StateIdle {
		t.Errorf("state %q after refusals, want idle", got)
	}
}

// blockingCommands makes every command wait until release is closed (or
// its ctx ends), counting those started.
type blockingCommands struct {
	release chan struct{}
	mu      sync.Mutex
	started int
}

func (b *blockingCommands) hook(_ context.Context, _ runner.KernelOptions, k *runnertest.Kernel) error {
	k.CommandFunc = func(ctx context.Context, req runner.CommandRequest, out runner.OutputFunc) (runner.CommandResult, error) {
		b.mu.Lock()
		b.started++
		b.mu.Unlock()
		select {
		case <-b.release:
			return runner.CommandResult{PID: 7, Reason: runner.ReasonOK}, nil
		case <-ctx.Done():
			return runner.CommandResult{PID: 7, ExitCode: 137, Signal: 9, Reason: runner.ReasonInterrupted}, context.Cause(ctx)
		}
	}
	return nil
}

func (b *blockingCommands) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.started
}

// TestCommandBesideCells: commands never take the session's turn, a few
// run at once, and a running one keeps the session from expiring.
func TestCommandBesideCells(t *testing.T) {
	b := &blockingCommands{release: make(chan struct{})}
	cellGo := make(chan struct{})
	f := newFixture(t, &runnertest.Runtime{KernelFunc: func(ctx context.Context, o runner.KernelOptions, k *runnertest.Kernel) error {
		k.ExecuteFunc = func(ctx context.Context, req runner.ExecuteRequest, events func(runner.Event)) (runner.ExecuteResult, error) {
			<-cellGo
			return runner.ExecuteResult{Status: runner.StatusOK, Reason: runner.ReasonOK}, nil
		}
		return b.hook(ctx, o, k)
	}}, kernels.Config{MaxCommands: 2, DefaultTTL: time.Minute})
	info := f.create(t, "", kernels.CreateOptions{})
	cell := f.goExecute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "x"})
	waitFor(t, "the cell to run", func() bool { return state(f.m, "", info.ID)() == kernels.StateBusy })

	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := f.m.Command(t.Context(), "", info.ID, kernels.CommandOptions{Argv: []string{"sleep"}}, nil)
			errs <- err
		}()
	}
	waitFor(t, "two commands to run beside the cell", func() bool { return b.count() == 2 })
	if got, err := f.m.Get("", info.ID); err != nil || got.Commands != 2 {
		t.Errorf("Get: %+v, %v; want 2 commands", got, err)
	}
	_, err := f.m.Command(t.Context(), "", info.ID, kernels.CommandOptions{Argv: []string{"sleep"}}, nil)
	if !errors.Is(err, kernels.ErrTooManyCommands) || err.Error() != "session "+info.ID+": 2 commands already running: too many commands running" {
		t.Errorf("a third command: %v, want ErrTooManyCommands", err)
	}

	f.clock.Advance(2 * time.Minute) // past the TTL: only the calls in progress keep it
	close(cellGo)
	if r := <-cell; r.err != nil {
		t.Fatalf("cell: %v", r.err)
	}
	if n := f.m.ReapNow(); n != 0 {
		t.Errorf("the reaper closed %d sessions while commands ran", n)
	}
	close(b.release)
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("command: %v", err)
		}
	}
	if got, err := f.m.Get("", info.ID); err != nil || got.Commands != 0 {
		t.Errorf("Get after the commands: %+v, %v", got, err)
	}
}

func TestCommandCallerGone(t *testing.T) {
	b := &blockingCommands{release: make(chan struct{})}
	f := newFixture(t, &runnertest.Runtime{KernelFunc: b.hook}, kernels.Config{})
	info := f.create(t, "", kernels.CreateOptions{})
	ctx, cancel := context.WithCancel(t.Context())
	errs := make(chan error, 1)
	go func() {
		_, err := f.m.Command(ctx, "", info.ID, kernels.CommandOptions{Argv: []string{"sleep"}}, nil)
		errs <- err
	}()
	waitFor(t, "the command to run", func() bool { return b.count() == 1 })
	cancel()
	if err := <-errs; !errors.Is(err, context.Canceled) || err.Error() != "running a command in session "+info.ID+": context canceled" {
		t.Errorf("Command = %v, want context.Canceled", err)
	}
	if got := state(f.m, "", info.ID)(); got != kernels.StateIdle {
		t.Errorf("state %q, want idle", got)
	}
}

// A command whose kernel dies fails with ErrKernelRestarting; the next
// runs on the fresh kernel. Once no fresh kernel can be had the session
// is lost.
func TestCommandKernelLost(t *testing.T) {
	b := &blockingCommands{release: make(chan struct{})}
	rt := &runnertest.Runtime{KernelFunc: b.hook}
	refuse := refuseStarts(rt)
	f := newFixture(t, rt, kernels.Config{})
	info := f.create(t, "", kernels.CreateOptions{})
	errs := make(chan error, 1)
	go func() {
		_, err := f.m.Command(t.Context(), "", info.ID, kernels.CommandOptions{Argv: []string{"sleep"}}, nil)
		errs <- err
	}()
	waitFor(t, "the command to run", func() bool { return b.count() == 1 })
	f.kernel(t, info).Lose()
	if err := <-errs; !errors.Is(err, kernels.ErrKernelRestarting) {
		t.Errorf("Command = %v, want ErrKernelRestarting", err)
	}
	waitFor(t, "a fresh kernel", func() bool {
		got, _ := f.m.Get("", info.ID)
		return got.Restarts == 1 && got.State == kernels.StateIdle
	})
	close(b.release)
	if res, err := f.m.Command(t.Context(), "", info.ID, kernels.CommandOptions{Argv: []string{"true"}}, nil); err != nil || res.Reason != runner.ReasonOK {
		t.Errorf("a command on the fresh kernel: %+v, %v; want ok", res, err)
	}

	info, _ = f.m.Get("", info.ID)
	f.lose(t, refuse, "", info)
	if _, err := f.m.Command(t.Context(), "", info.ID, kernels.CommandOptions{Argv: []string{"true"}}, nil); !errors.Is(err, kernels.ErrSessionLost) {
		t.Errorf("a command in a lost session: %v, want ErrSessionLost", err)
	}
}
