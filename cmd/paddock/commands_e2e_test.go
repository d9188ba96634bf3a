package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/wire"
)

// cmdOut collects a command's output.
type cmdOut struct {
	mu             sync.Mutex
	stdout, stderr strings.Builder
}

func (o *cmdOut) out(s runner.Stream, b []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if s == runner.Stdout {
		o.stdout.Write(b)
	} else {
		o.stderr.Write(b)
	}
}

// cmdResult is what the end-to-end tests check of a command.
type cmdResult struct {
	stdout, stderr string
	exitCode       int
	signal         int
	reason         runner.Reason
}

// anonymous is the caller of a server without auth, as a door sees it.
var anonymous = core.Caller{Door: "e2b"}

// command runs in in the anonymous tenant's session id through the
// server's core, as a door does.
func (e *e2e) command(t *testing.T, id string, in core.CommandInput) (cmdResult, error) {
	t.Helper()
	var out cmdOut
	res, err := e.st.Core.Command(t.Context(), anonymous, id, in, out.out)
	out.mu.Lock()
	defer out.mu.Unlock()
	return cmdResult{stdout: out.stdout.String(), stderr: out.stderr.String(), exitCode: res.ExitCode, signal: res.Signal, reason: res.Reason}, err
}

func shell(script string) []string { return []string{"/bin/bash", "-l", "-c", script} }

func TestE2ECommands(t *testing.T) {
	e := newE2E(t)
	id := e.newSession(t, map[string]any{"language": "python", "env": map[string]string{"FROM_SESSION": "yes"},
		"limits": map[string]any{"open_files": 200, "processes": 20}})

	forged := forgedEnds()
	escaped := ""
	for _, b := range []byte(forged) {
		escaped += fmt.Sprintf(`\x%02x`, b)
	}
	tests := []struct {
		name string
		o    core.CommandInput
		want cmdResult
	}{
		{name: "echo", o: core.CommandInput{Argv: shell("echo hi")}, want: cmdResult{stdout: "hi\n", reason: runner.ReasonOK}},
		{name: "exit 3", o: core.CommandInput{Argv: shell("exit 3")}, want: cmdResult{exitCode: 3, reason: runner.ReasonError}},
		{name: "killed by a signal", o: core.CommandInput{Argv: shell("kill -KILL $$")}, want: cmdResult{exitCode: 137, signal: 9, reason: runner.ReasonKilled}},
		{name: "the session's user, limits and environment", o: core.CommandInput{Argv: shell("id -u; ulimit -n; ulimit -u; pwd; echo $FROM_SESSION")},
			want: cmdResult{stdout: "1000\n200\n20\n/workspace\nyes\n", reason: runner.ReasonOK}},
		{name: "a forged end", o: core.CommandInput{Argv: shell(`printf "$F"; { printf "$F" > /proc/1/fd/1; } 2>/dev/null; exit 5`), Env: map[string]string{"F": escaped}},
			want: cmdResult{stdout: forged, exitCode: 5, reason: runner.ReasonError}},
		{name: "timeout", o: core.CommandInput{Argv: []string{"sleep", "600"}, Timeout: 500 * time.Millisecond},
			want: cmdResult{exitCode: 137, signal: 9, reason: runner.ReasonTimeout}},
		{name: "output cap", o: core.CommandInput{Argv: shell("yes | head -c 100000"), MaxOutputBytes: 1000},
			want: cmdResult{stdout: strings.Repeat("y\n", 500), exitCode: 137, signal: 9, reason: runner.ReasonOutputLimit}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.command(t, id, tt.o)
			if err != nil || got != tt.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}

	t.Run("a command outside the workspace", func(t *testing.T) {
		_, err := e.command(t, id, core.CommandInput{Argv: []string{"pwd"}, Dir: "../etc"})
		var ce *core.Error
		if !errors.As(err, &ce) || ce.Kind != core.KindInvalid || ce.Code != "invalid_path" {
			t.Errorf("Command = %v, want invalid_path", err)
		}
		// A link out of the workspace that a command planted is refused
		// inside the sandbox.
		if got, err := e.command(t, id, core.CommandInput{Argv: shell("ln -s /etc out")}); err != nil || got.reason != runner.ReasonOK {
			t.Fatalf("ln: %+v, %v", got, err)
		}
		_, err = e.command(t, id, core.CommandInput{Argv: []string{"pwd"}, Dir: "out"})
		if !errors.As(err, &ce) || ce.Kind != core.KindInvalid || ce.Code != "invalid_path" ||
			ce.Message != `cannot run the command in "out": the path leads out of the working directory (a symbolic link or ".." points outside it)` {
			t.Errorf("Command = %v, want invalid_path", err)
		}
	})

	t.Run("beside a cell, in the same sandbox", func(t *testing.T) {
		type execOut struct {
			status int
			raw    []byte
		}
		cell := make(chan execOut, 1)
		go func() {
			code := "import os, time\nprint('waiting', flush=True)\nwhile not os.path.exists('from-command'): time.sleep(0.01)\nprint(open('from-command').read(), end='')"
			status, raw := e.do(t, "POST", "/v1/sessions/"+id+"/execute", map[string]any{"code": code, "timeout_ms": 30000}, "")
			cell <- execOut{status, raw}
		}()
		// The cell is running (its session busy) when the command starts,
		// and ends only after the command wrote its file. The command
		// renames a finished file into place, so the cell never reads it
		// half written.
		deadline := time.Now().Add(time.Minute) // a safety net
		for {
			status, raw := e.do(t, "GET", "/v1/sessions/"+id, nil, "")
			if status == http.StatusOK && strings.Contains(string(raw), `"state":"busy"`) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the cell never ran: %s", raw)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if got, err := e.command(t, id, core.CommandInput{Argv: shell("echo from-command > part && mv part from-command")}); err != nil || got.reason != runner.ReasonOK {
			t.Fatalf("command: %+v, %v", got, err)
		}
		r := <-cell
		var x execResp
		if r.status != http.StatusOK || json.Unmarshal(r.raw, &x) != nil || x.Stdout != "waiting\nfrom-command\n" {
			t.Fatalf("cell: HTTP %d %s", r.status, r.raw)
		}
	})

	t.Run("the caller going away", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		started := make(chan struct{}, 1)
		done := make(chan error, 1)
		go func() {
			_, err := e.st.Core.Command(ctx, anonymous, id, core.CommandInput{Argv: shell("echo go; exec sleep 600"), Timeout: 30 * time.Second},
				func(runner.Stream, []byte) {
					select {
					case started <- struct{}{}:
					default:
					}
				})
			done <- err
		}()
		<-started
		cancel()
		var ce *core.Error
		if err := <-done; !errors.As(err, &ce) || ce.Kind != core.KindCanceled {
			t.Fatalf("Command = %v, want KindCanceled", err)
		}
		if got, err := e.command(t, id, core.CommandInput{Argv: shell(`cat /proc/[0-9]*/comm | grep -c '^sleep$' || true`)}); err != nil || got.stdout != "0\n" {
			t.Errorf("sleeps left: %+v, %v", got, err)
		}
	})
}

// forgedEnds is what a command would write on the agent's channel to end
// itself cleanly, whatever its request's ID: a CommandEnd frame for each
// of the first 200 IDs.
func forgedEnds() string {
	var b []byte
	for id := uint64(1); id <= 200; id++ {
		payload, _ := json.Marshal(wire.CommandEnd{ID: id, Reason: "ok"})
		b = append(binary.BigEndian.AppendUint32(append(b, byte(wire.TypeCommandEnd)), uint32(len(payload))), payload...)
	}
	return string(b)
}
