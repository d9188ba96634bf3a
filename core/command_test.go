package core_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

func TestCommand(t *testing.T) {
	f := newFixture(t, core.Config{Auth: core.Auth{HS256Secret: secret}})
	alice, err := f.svc.Authenticate(peer, token(t, "alice", "sessions"), "e2b")
	if err != nil {
		t.Fatal(err)
	}
	bob, err := f.svc.Authenticate(peer, token(t, "bob", "sessions"), "e2b")
	if err != nil {
		t.Fatal(err)
	}
	runOnly, err := f.svc.Authenticate(peer, token(t, "alice", "run"), "e2b")
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.svc.CreateSession(t.Context(), alice, core.SessionInput{Language: "python"})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	res, err := f.svc.Command(t.Context(), alice, s.ID, core.CommandInput{Argv: []string{"echo", "hi"}, Env: map[string]string{"A": "1"}, Dir: "sub",
		Timeout: 2 * time.Second, MaxOutputBytes: 100, Started: func(pid int) { fmt.Fprintf(&out, "started:%d;", pid) }},
		func(st runner.Stream, b []byte) { out.WriteString(string(st) + ":" + string(b)) })
	if want := (runner.CommandResult{PID: 101, Reason: runner.ReasonOK, Exec: runnertest.FakeExec}); err != nil || res != want || out.String() != "started:101;stdout:hi\n" {
		t.Errorf("Command = %+v, %v, output %q; want %+v", res, err, out.String(), want)
	}
	res, err = f.svc.Command(t.Context(), alice, s.ID, core.CommandInput{Argv: []string{"false"}, Dir: "."}, nil)
	if err != nil || res.ExitCode != 1 || res.Reason != runner.ReasonError {
		t.Errorf("a failing command is a result: %+v, %v", res, err)
	}
	k := f.rt.Sandboxes()[0].Kernel()
	want := []runner.CommandRequest{
		{Argv: []string{"echo", "hi"}, Env: map[string]string{"A": "1"}, Dir: "sub", Timeout: 2 * time.Second, MaxStdout: 100, MaxStderr: 100},
		{Argv: []string{"false"}, Dir: ".", Timeout: 30 * time.Second, MaxStdout: 1 << 20, MaxStderr: 1 << 20},
	}
	got := k.Commands()
	for i := range got {
		got[i].Started = nil // a func: compared through its call above
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("kernel requests\n%+v\nwant\n%+v", got, want)
	}

	refusals := []struct {
		name   string
		caller core.Caller
		in     core.CommandInput
		kind   core.Kind
		code   string
		msg    string
	}{
		{"another tenant", bob, core.CommandInput{Argv: []string{"true"}}, core.KindNotFound, "session_not_found",
			"no such session (it may have expired or been deleted)"},
		{"no sessions scope", runOnly, core.CommandInput{Argv: []string{"true"}}, core.KindForbidden, "insufficient_scope",
			`this token does not grant the "sessions" scope this route needs`},
		{"no argv", alice, core.CommandInput{}, core.KindInvalid, "invalid_request", "argv must name a program to run (argv[0])"},
		{"NUL in argv", alice, core.CommandInput{Argv: []string{"echo", "a\x00"}}, core.KindInvalid, "invalid_request", "argv[1] must not contain a NUL byte"},
		{"bad env", alice, core.CommandInput{Argv: []string{"true"}, Env: map[string]string{"A=B": "x"}}, core.KindInvalid, "invalid_request",
			`env key "A=B" must not contain '='`},
		{"absolute dir", alice, core.CommandInput{Argv: []string{"true"}, Dir: "/etc"}, core.KindInvalid, "invalid_path",
			"dir must be relative to the session's working directory, not absolute"},
		{"dir up", alice, core.CommandInput{Argv: []string{"true"}, Dir: "a/../.."}, core.KindInvalid, "invalid_path", `dir must not contain ".." components`},
		{"timeout too long", alice, core.CommandInput{Argv: []string{"true"}, Timeout: time.Hour}, core.KindInvalid, "invalid_request",
			"timeout_ms must be between 1 and 600000, or 0 for the default (30000); got 3600000"},
		{"output cap too large", alice, core.CommandInput{Argv: []string{"true"}, MaxOutputBytes: 2 << 20}, core.KindInvalid, "invalid_request",
			"max_output_bytes must be between 1 and 1048576, or 0 for the default; got 2097152"},
	}
	for _, tt := range refusals {
		_, err := f.svc.Command(t.Context(), tt.caller, s.ID, tt.in, nil)
		if e := checkErr(t, tt.name, err, tt.kind, tt.code); e.Message != tt.msg {
			t.Errorf("%s: message %q, want %q", tt.name, e.Message, tt.msg)
		}
	}
	if n := len(k.Commands()); n != 2 {
		t.Errorf("the kernel got %d commands, want none of the refused", n)
	}
	if got := calls(t, f.svc, "e2b", "command", "ok"); got != 2 {
		t.Errorf("e2b commands counted = %g, want 2", got)
	}
}

// The sandbox's refusals and the session's command limit read as the
// other session calls' do.
func TestCommandKernelRefusals(t *testing.T) {
	f := newFixture(t, core.Config{})
	c := core.Caller{Door: "e2b"}
	release := make(chan struct{})
	f.rt.KernelFunc = func(_ context.Context, _ runner.KernelOptions, k *runnertest.Kernel) error {
		k.CommandFunc = func(ctx context.Context, req runner.CommandRequest, out runner.OutputFunc) (runner.CommandResult, error) {
			switch req.Argv[0] {
			case "missing":
				return runner.CommandResult{}, &runner.FileError{Op: runner.FileCommandDir, Path: req.Dir, Kind: runner.FileNotFound}
			case "escape":
				return runner.CommandResult{}, &runner.FileError{Op: runner.FileCommandDir, Path: req.Dir, Kind: runner.FileBadPath}
			}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return runner.CommandResult{Reason: runner.ReasonOK}, nil
		}
		return nil
	}
	s, err := f.svc.CreateSession(t.Context(), c, core.SessionInput{Language: "python"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.Command(t.Context(), c, s.ID, core.CommandInput{Argv: []string{"missing"}, Dir: "gone"}, nil)
	if e := checkErr(t, "missing dir", err, core.KindNotFound, "file_not_found"); e.Message != `cannot run the command in "gone": no such file or directory` {
		t.Errorf("message %q", e.Message)
	}
	_, err = f.svc.Command(t.Context(), c, s.ID, core.CommandInput{Argv: []string{"escape"}, Dir: "link"}, nil)
	checkErr(t, "dir through a link", err, core.KindInvalid, "invalid_path")

	errs := make(chan error, 4)
	for range 4 {
		go func() {
			_, err := f.svc.Command(t.Context(), c, s.ID, core.CommandInput{Argv: []string{"sleep"}}, nil)
			errs <- err
		}()
	}
	waitUntil(t, "four commands running", func() bool {
		got, err := f.svc.Session(c, s.ID)
		return err == nil && got.Commands == 4
	})
	_, err = f.svc.Command(t.Context(), c, s.ID, core.CommandInput{Argv: []string{"sleep"}}, nil)
	if e := checkErr(t, "a fifth command", err, core.KindTooMany, "too_many_commands"); e.Message != "the session runs its maximum of 4 commands at once; retry when one ends" ||
		e.RetryAfter != time.Second {
		t.Errorf("refusal %+v", e)
	}
	close(release)
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a safety net, not a speed
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
