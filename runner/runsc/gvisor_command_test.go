package runsc_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/wire"
)

// commandOutput collects a command's streams.
type commandOutput struct {
	mu             sync.Mutex
	stdout, stderr strings.Builder
	seen           chan struct{} // receives after each stdout chunk, if set
}

func (o *commandOutput) out(stream runner.Stream, b []byte) {
	o.mu.Lock()
	if stream == runner.Stdout {
		o.stdout.Write(b)
	} else {
		o.stderr.Write(b)
	}
	o.mu.Unlock()
	if stream == runner.Stdout && o.seen != nil {
		select {
		case o.seen <- struct{}{}:
		default:
		}
	}
}

func (o *commandOutput) text() (string, string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.stdout.String(), o.stderr.String()
}

// openKernel starts a sandbox of lang and opens a kernel on it; the
// sandbox is destroyed when the test ends.
func (e *realEnv) openKernel(t *testing.T, lang string) runner.Kernel {
	t.Helper()
	sb, err := e.rt.Start(t.Context(), e.specs[lang])
	if err != nil {
		t.Fatalf("start %s: %v", lang, err)
	}
	t.Cleanup(func() {
		if err := sb.Destroy(context.Background()); err != nil {
			t.Errorf("destroy: %v", err)
		}
	})
	k, err := sb.(runner.KernelOpener).OpenKernel(t.Context(), runner.KernelOptions{Env: map[string]string{"FROM_SESSION": "yes"}})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// cmdShape is what the tests check of a command.
type cmdShape struct {
	stdout, stderr string
	exitCode       int
	signal         int
	reason         runner.Reason
}

func runCommand(t *testing.T, k runner.Kernel, req runner.CommandRequest) (cmdShape, runner.CommandResult) {
	t.Helper()
	if req.Timeout == 0 {
		req.Timeout = time.Minute // a safety net
	}
	var o commandOutput
	started := 0
	req.Started = func(pid int) {
		o.mu.Lock()
		defer o.mu.Unlock()
		if o.stdout.Len() > 0 || o.stderr.Len() > 0 {
			t.Errorf("command %q: started after output", req.Argv)
		}
		started = pid
	}
	res, err := k.(runner.Commander).Command(t.Context(), req, o.out)
	if err != nil {
		t.Fatalf("command %q: %v", req.Argv, err)
	}
	if res.PID <= 1 || started != res.PID {
		t.Errorf("command %q: pid %d, started with %d", req.Argv, res.PID, started)
	}
	stdout, stderr := o.text()
	return cmdShape{stdout: stdout, stderr: stderr, exitCode: res.ExitCode, signal: res.Signal, reason: res.Reason}, res
}

func bash(script string) []string { return []string{"/bin/bash", "-l", "-c", script} }

func TestGVisorCommands(t *testing.T) {
	e := newRealEnv(t)
	k := e.openKernel(t, "python")

	// A frame that would end a command cleanly, were it written on the
	// agent's channel (which the command cannot reach), as printf escapes.
	payload, _ := json.Marshal(wire.CommandEnd{ID: 1 << 40, Reason: "ok"})
	forged := string(append(binary.BigEndian.AppendUint32([]byte{byte(wire.TypeCommandEnd)}, uint32(len(payload))), payload...))
	escaped := ""
	for _, b := range []byte(forged) {
		escaped += fmt.Sprintf(`\x%02x`, b)
	}

	tests := []struct {
		name string
		req  runner.CommandRequest
		want cmdShape
	}{
		{name: "echo", req: runner.CommandRequest{Argv: bash("echo hi")}, want: cmdShape{stdout: "hi\n", reason: runner.ReasonOK}},
		{name: "exit 3", req: runner.CommandRequest{Argv: bash("exit 3")}, want: cmdShape{exitCode: 3, reason: runner.ReasonError}},
		{name: "killed by a signal", req: runner.CommandRequest{Argv: bash("kill -TERM $$")}, want: cmdShape{exitCode: 143, signal: 15, reason: runner.ReasonKilled}},
		{name: "sandbox user", req: runner.CommandRequest{Argv: bash("id -u; id -g; pwd; echo $HOME $FROM_SESSION $FROM_REQUEST"), Env: map[string]string{"FROM_REQUEST": "too"}},
			want: cmdShape{stdout: "1000\n1000\n/workspace\n/workspace yes too\n", reason: runner.ReasonOK}},
		{
			name: "a forged end",
			req: runner.CommandRequest{
				Argv: bash(`printf "$FORGED"; printf "$FORGED" >/proc/1/fd/1 || echo refused >&2; exit 7`),
				Env:  map[string]string{"FORGED": escaped},
			},
			want: cmdShape{stdout: forged, stderr: "refused\n", exitCode: 7, reason: runner.ReasonError},
		},
		{name: "the agent is out of reach", req: runner.CommandRequest{Argv: bash("kill -KILL 1 2>/dev/null || echo refused")},
			want: cmdShape{stdout: "refused\n", reason: runner.ReasonOK}},
		{name: "timeout", req: runner.CommandRequest{Argv: []string{"sleep", "600"}, Timeout: 500 * time.Millisecond},
			want: cmdShape{exitCode: 137, signal: 9, reason: runner.ReasonTimeout}},
		{name: "output cap", req: runner.CommandRequest{Argv: bash("yes | head -c 100000"), MaxStdout: 1000},
			want: cmdShape{stdout: strings.Repeat("y\n", 500), exitCode: 137, signal: 9, reason: runner.ReasonOutputLimit}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, res := runCommand(t, k, tt.req)
			// bash names the /proc path it could not open on stderr
			// before ours.
			if i := strings.LastIndex(got.stderr, "refused\n"); i > 0 {
				got.stderr = got.stderr[i:]
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if tt.want.reason == runner.ReasonOutputLimit && !res.StdoutTruncated {
				t.Errorf("stdout not marked truncated: %+v", res)
			}
			if tt.want.reason == runner.ReasonTimeout && res.Exec < tt.req.Timeout {
				t.Errorf("ended after %v, before its %v timeout", res.Exec, tt.req.Timeout)
			}
		})
	}

	t.Run("the kernel reads what a command wrote", func(t *testing.T) {
		if got, _ := runCommand(t, k, runner.CommandRequest{Argv: bash("mkdir -p sub && cd sub && echo from-command > made.txt")}); got.reason != runner.ReasonOK {
			t.Fatalf("command: %+v", got)
		}
		var out strings.Builder
		res, err := k.Execute(t.Context(), runner.ExecuteRequest{Code: "print(open('sub/made.txt').read(), end='')", Timeout: time.Minute, MaxOutput: 1 << 20},
			func(ev runner.Event) { out.WriteString(ev.Text) })
		if err != nil || res.Reason != runner.ReasonOK || out.String() != "from-command\n" {
			t.Fatalf("cell: %+v, %v, output %q", res, err, out.String())
		}
		if got, _ := runCommand(t, k, runner.CommandRequest{Argv: []string{"pwd"}, Dir: "sub"}); got.stdout != "/workspace/sub\n" {
			t.Errorf("pwd in sub: %+v", got)
		}
	})

	t.Run("the working directory stays in the workspace", func(t *testing.T) {
		if got, _ := runCommand(t, k, runner.CommandRequest{Argv: bash("ln -s / out && ln -s .. up")}); got.reason != runner.ReasonOK {
			t.Fatalf("command: %+v", got)
		}
		for _, dir := range []string{"..", "../etc", "/etc", "out", "out/etc", "up", "sub/../.."} {
			_, err := k.(runner.Commander).Command(t.Context(), runner.CommandRequest{Argv: []string{"pwd"}, Dir: dir, Timeout: time.Minute}, nil)
			var fe *runner.FileError
			if !errors.As(err, &fe) || fe.Kind != runner.FileBadPath || fe.Op != runner.FileCommandDir || fe.Path != dir {
				t.Errorf("dir %q: %v, want a bad_path FileError", dir, err)
			}
		}
	})

	t.Run("the caller going away kills the command", func(t *testing.T) {
		o := commandOutput{seen: make(chan struct{}, 1)}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			_, err := k.(runner.Commander).Command(ctx, runner.CommandRequest{Argv: bash("echo $$; exec sleep 600"), Timeout: 10 * time.Minute}, o.out)
			done <- err
		}()
		var pid int
		for pid == 0 {
			<-o.seen
			stdout, _ := o.text()
			if strings.HasSuffix(stdout, "\n") {
				pid, _ = strconv.Atoi(strings.TrimSpace(stdout))
			}
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("Command = %v, want context.Canceled", err)
		}
		probe := fmt.Sprintf("test -e /proc/%d && echo alive || echo gone", pid)
		if got, _ := runCommand(t, k, runner.CommandRequest{Argv: bash(probe)}); got.stdout != "gone\n" {
			t.Errorf("process %d after its caller went away: %+v", pid, got)
		}
	})
}

// TestGVisorCommandsNode checks the node template's shell.
func TestGVisorCommandsNode(t *testing.T) {
	e := newRealEnv(t)
	k := e.openKernel(t, "node")
	if got, _ := runCommand(t, k, runner.CommandRequest{Argv: bash("echo hi; node --version | cut -c1")}); got != (cmdShape{stdout: "hi\nv\n", reason: runner.ReasonOK}) {
		t.Errorf("got %+v", got)
	}
}
