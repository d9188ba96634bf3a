package runnertest_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

func TestKernelScript(t *testing.T) {
	tests := []struct {
		name       string
		code       string
		maxOutput  int64
		wantEvents []runner.Event
		wantResult runner.ExecuteResult
		wantErr    error
		timeout    time.Duration
	}{
		{
			name:       "expression echoes its text",
			code:       "1 + 1",
			wantEvents: []runner.Event{{Type: runner.EventExecuteResult, Data: map[string]any{"text/plain": "1 + 1"}, ExecutionCount: 1}},
			wantResult: runner.ExecuteResult{ExecutionCount: 1, Status: "ok", Reason: "ok", Exec: time.Millisecond},
		},
		{
			name: "streams, display and a variable",
			code: "x = 41\nprint hi\neprint oops\ndisplay pic\nx",
			wantEvents: []runner.Event{
				{Type: runner.EventStream, Stream: runner.Stdout, Text: "hi\n"},
				{Type: runner.EventStream, Stream: runner.Stderr, Text: "oops\n"},
				{Type: runner.EventDisplayData, Data: map[string]any{"text/plain": "pic"}},
				{Type: runner.EventExecuteResult, Data: map[string]any{"text/plain": "41"}, ExecutionCount: 1},
			},
			wantResult: runner.ExecuteResult{ExecutionCount: 1, Status: "ok", Reason: "ok", Exec: time.Millisecond},
		},
		{
			name: "raise",
			code: "print a\nraise ValueError: bad\nprint b",
			wantEvents: []runner.Event{
				{Type: runner.EventStream, Stream: runner.Stdout, Text: "a\n"},
				{Type: runner.EventError, Error: &runner.ExecError{Name: "ValueError", Value: "bad", Traceback: []string{"line 2", "ValueError: bad"}}},
			},
			wantResult: runner.ExecuteResult{ExecutionCount: 1, Status: "error", Reason: "error", Exec: time.Millisecond,
				Error: &runner.ExecError{Name: "ValueError", Value: "bad", Traceback: []string{"line 2", "ValueError: bad"}}},
		},
		{
			name:       "output limit",
			code:       "print 12345\nprint 67",
			maxOutput:  8,
			wantEvents: []runner.Event{{Type: runner.EventStream, Stream: runner.Stdout, Text: "12345\n"}, {Type: runner.EventStream, Stream: runner.Stdout, Text: "67"}},
			wantResult: runner.ExecuteResult{ExecutionCount: 1, Status: "aborted", Reason: "output_limit", Exec: time.Millisecond},
		},
		{
			name:       "oom",
			code:       "oom",
			wantResult: runner.ExecuteResult{ExecutionCount: 1, Status: "aborted", Reason: "oom", Exec: time.Millisecond, Lost: true},
		},
		{
			name:       "hang",
			code:       "hang",
			timeout:    time.Millisecond,
			wantResult: runner.ExecuteResult{ExecutionCount: 1, Status: "aborted", Reason: "timeout", Exec: time.Millisecond, Lost: true},
		},
		{
			name:    "die",
			code:    "die",
			wantErr: runner.ErrKernelLost,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := runnertest.NewKernel(runner.KernelOptions{})
			var events []runner.Event
			res, err := k.Execute(t.Context(), runner.ExecuteRequest{Code: tc.code, MaxOutput: tc.maxOutput, Timeout: tc.timeout}, func(e runner.Event) {
				events = append(events, e)
			})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Execute error = %v, want %v", err, tc.wantErr)
			}
			if !reflect.DeepEqual(events, tc.wantEvents) {
				t.Errorf("events = %+v\nwant     %+v", events, tc.wantEvents)
			}
			if !reflect.DeepEqual(res, tc.wantResult) {
				t.Errorf("result = %+v\nwant     %+v", res, tc.wantResult)
			}
			select {
			case <-k.Lost():
				if !tc.wantResult.Lost && tc.wantErr == nil {
					t.Errorf("the kernel is lost; the result did not say so")
				}
			default:
				if tc.wantResult.Lost {
					t.Errorf("the result says Lost; the kernel is not")
				}
			}
		})
	}
}

func TestKernelStateAndRestart(t *testing.T) {
	k := runnertest.NewKernel(runner.KernelOptions{Env: map[string]string{"A": "kernel", "B": "b"}})
	exec := func(code string, env map[string]string) (string, int) {
		t.Helper()
		var out string
		res, err := k.Execute(t.Context(), runner.ExecuteRequest{Code: code, Env: env}, func(e runner.Event) {
			if e.Type == runner.EventExecuteResult {
				out = e.Data["text/plain"].(string)
			}
		})
		if err != nil {
			t.Fatalf("Execute(%q): %v", code, err)
		}
		return out, res.ExecutionCount
	}
	exec("x = 1", nil)
	if out, n := exec("x", nil); out != "1" || n != 2 {
		t.Errorf("x = %q at count %d, want 1 at 2", out, n)
	}
	if out, _ := exec("env A", map[string]string{"A": "cell"}); out != "cell" {
		t.Errorf("env A = %q, want cell", out)
	}
	if out, _ := exec("env B", nil); out != "b" {
		t.Errorf("env B = %q, want b", out)
	}
	if err := k.Restart(t.Context()); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	if out, n := exec("x", nil); out != "x" || n != 1 {
		t.Errorf("after restart x = %q at count %d, want x at 1", out, n)
	}
	if got := [3]int{k.Executes(), k.Restarts(), k.Overlaps()}; got != [3]int{5, 1, 0} {
		t.Errorf("executes, restarts, overlaps = %v, want [5 1 0]", got)
	}
}

func TestKernelInterruptTimeoutAndLoss(t *testing.T) {
	tests := []struct {
		name       string
		timeout    time.Duration
		act        func(t *testing.T, k *runnertest.Kernel)
		wantResult runner.ExecuteResult
		wantErr    error
	}{
		{
			name: "interrupt",
			act: func(t *testing.T, k *runnertest.Kernel) {
				waitUntil(t, "cell running", k.Running)
				_ = k.Interrupt(context.Background())
			},
			wantResult: runner.ExecuteResult{ExecutionCount: 1, Status: "aborted", Reason: "interrupted", Exec: time.Millisecond},
		},
		{
			name:       "timeout",
			timeout:    time.Millisecond,
			act:        func(*testing.T, *runnertest.Kernel) {},
			wantResult: runner.ExecuteResult{ExecutionCount: 1, Status: "aborted", Reason: "timeout", Exec: time.Millisecond},
		},
		{
			name: "lost",
			act: func(t *testing.T, k *runnertest.Kernel) {
				waitUntil(t, "cell running", k.Running)
				k.Lose()
			},
			wantErr: runner.ErrKernelLost,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := runnertest.NewKernel(runner.KernelOptions{})
			type outcome struct {
				res runner.ExecuteResult
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				res, err := k.Execute(t.Context(), runner.ExecuteRequest{Code: "sleep 1h", Timeout: tc.timeout}, nil)
				done <- outcome{res, err}
			}()
			tc.act(t, k)
			o := <-done
			if !errors.Is(o.err, tc.wantErr) {
				t.Fatalf("Execute error = %v, want %v", o.err, tc.wantErr)
			}
			if o.res != tc.wantResult {
				t.Errorf("result = %+v, want %+v", o.res, tc.wantResult)
			}
		})
	}
}

func TestKernelRefusesOverlap(t *testing.T) {
	k := runnertest.NewKernel(runner.KernelOptions{})
	go func() { _, _ = k.Execute(t.Context(), runner.ExecuteRequest{Code: "sleep 1h"}, nil) }()
	waitUntil(t, "cell running", k.Running)
	if _, err := k.Execute(t.Context(), runner.ExecuteRequest{Code: "1"}, nil); err == nil {
		t.Error("second concurrent Execute succeeded, want an error")
	}
	if got := k.Overlaps(); got != 1 {
		t.Errorf("Overlaps = %d, want 1", got)
	}
	k.Lose()
}

func TestSandboxOpenKernel(t *testing.T) {
	rt := &runnertest.Runtime{KernelFunc: func(_ context.Context, opts runner.KernelOptions, k *runnertest.Kernel) error {
		if opts.Env["FAIL"] != "" {
			return errors.New("open refused")
		}
		return nil
	}}
	sb := rt.NewSandbox(runner.Spec{})
	k, err := sb.OpenKernel(t.Context(), runner.KernelOptions{})
	if err != nil {
		t.Fatalf("OpenKernel: %v", err)
	}
	if sb.Kernel() != k {
		t.Error("Sandbox.Kernel is not the opened kernel")
	}
	if _, err := sb.Run(t.Context(), runner.RunRequest{Code: "x"}, nil); !errors.Is(err, runner.ErrUsed) {
		t.Errorf("Run after OpenKernel error = %v, want ErrUsed", err)
	}
	if _, err := sb.OpenKernel(t.Context(), runner.KernelOptions{}); !errors.Is(err, runner.ErrUsed) {
		t.Errorf("second OpenKernel error = %v, want ErrUsed", err)
	}
	if err := sb.Destroy(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-k.Lost():
	case <-time.After(10 * time.Second):
		t.Fatal("kernel not lost after Destroy")
	}
	if _, err := k.Execute(t.Context(), runner.ExecuteRequest{Code: "1"}, nil); !errors.Is(err, runner.ErrKernelLost) {
		t.Errorf("Execute after loss error = %v, want ErrKernelLost", err)
	}

	failing := rt.NewSandbox(runner.Spec{})
	if _, err := failing.OpenKernel(t.Context(), runner.KernelOptions{Env: map[string]string{"FAIL": "1"}}); err == nil || err.Error() != "open refused" {
		t.Errorf("OpenKernel error = %v, want open refused", err)
	}
	_ = failing.Destroy(t.Context())
}

func TestKernelFiles(t *testing.T) {
	k := runnertest.NewKernel(runner.KernelOptions{})
	for p, content := range map[string]string{"a.txt": "hello", "d/b.bin": "xy", "d/e/c": ""} {
		if err := k.WriteFile(t.Context(), p, []byte(content)); err != nil {
			t.Fatalf("WriteFile(%q): %v", p, err)
		}
	}
	tests := []struct {
		name     string
		op       func() (any, error)
		want     any
		wantErr  error
		wantKind runner.FileErrorKind // a *runner.FileError of this kind instead of wantErr
	}{
		{name: "read", op: func() (any, error) { b, err := k.ReadFile(t.Context(), "./a.txt", 0); return string(b), err }, want: "hello"},
		{name: "read at the cap", op: func() (any, error) { b, err := k.ReadFile(t.Context(), "a.txt", 5); return string(b), err }, want: "hello"},
		{name: "read over the cap", op: func() (any, error) { _, err := k.ReadFile(t.Context(), "a.txt", 4); return nil, err }, wantKind: runner.FileTooLarge},
		{name: "read missing", op: func() (any, error) { _, err := k.ReadFile(t.Context(), "nope", 0); return nil, err }, wantErr: runner.ErrNotFound},
		{name: "read escaping", op: func() (any, error) { _, err := k.ReadFile(t.Context(), "../etc/passwd", 0); return nil, err }, wantKind: runner.FileBadPath},
		{name: "write absolute", op: func() (any, error) { return nil, k.WriteFile(t.Context(), "/etc/x", nil) }, wantKind: runner.FileBadPath},
		{name: "list root", op: func() (any, error) { return k.ListFiles(t.Context(), "") }, want: []runner.FileInfo{
			{Name: "a.txt", Size: 5, Mode: "-rw-r--r--", MTime: runnertest.FileMTime},
			{Name: "d", IsDir: true, Mode: "drwxr-xr-x", MTime: runnertest.FileMTime},
		}},
		{name: "list dir", op: func() (any, error) { return k.ListFiles(t.Context(), "d") }, want: []runner.FileInfo{
			{Name: "b.bin", Size: 2, Mode: "-rw-r--r--", MTime: runnertest.FileMTime},
			{Name: "e", IsDir: true, Mode: "drwxr-xr-x", MTime: runnertest.FileMTime},
		}},
		{name: "list missing", op: func() (any, error) { return k.ListFiles(t.Context(), "zz") }, wantErr: runner.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.op()
			if tc.wantKind != "" {
				var fe *runner.FileError
				if !errors.As(err, &fe) || fe.Kind != tc.wantKind {
					t.Fatalf("error = %v, want a FileError of kind %s", err, tc.wantKind)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error = %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr == nil && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
