package agent

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/internal/prereq"
	"github.com/paddock-dev/paddock/runner/wire"
)

// cmdResult is everything the agent sent for one command after its Ack.
type cmdResult struct {
	stdout, stderr []byte
	end            *wire.CommandEnd
}

func (k *kernelClient) cmd(id uint64) *cmdResult {
	r := k.cmds[id]
	if r == nil {
		r = &cmdResult{}
		k.cmds[id] = r
	}
	return r
}

// stashCommand keeps a command's output or end.
func (k *kernelClient) stashCommand(f wire.Frame) {
	k.t.Helper()
	var id uint64
	switch f.Type {
	case wire.TypeCommandOutput:
		o, err := wire.ParseCommandOutput(f.Payload)
		if err != nil {
			k.t.Fatalf("command output %q: %v", f.Payload, err)
		}
		r := k.cmd(o.ID)
		if r.end != nil {
			k.t.Fatalf("output %q of command %d after its end", o.Data, o.ID)
		}
		if o.Stream == wire.StreamStdout {
			r.stdout = append(r.stdout, o.Data...)
		} else {
			r.stderr = append(r.stderr, o.Data...)
		}
		return
	case wire.TypeCommandEnd:
		var e wire.CommandEnd
		k.decode(f, &e)
		id = e.ID
		r := k.cmd(id)
		if r.end != nil {
			k.t.Fatalf("second end %+v of command %d", e, id)
		}
		r.end = &e
	}
}

// startCommand sends req with a fresh ID, and a minute's timeout as a
// safety net unless it has one, and returns the ID and the Ack.
func (k *kernelClient) startCommand(req wire.Command) (uint64, wire.Ack) {
	k.t.Helper()
	req.ID = k.nextID()
	if req.TimeoutMS == 0 {
		req.TimeoutMS = 60_000
	}
	return req.ID, k.call(wire.TypeCommand, req.ID, req)
}

// waitCommand reads frames until command id has ended.
func (k *kernelClient) waitCommand(id uint64) cmdResult {
	k.t.Helper()
	for k.cmd(id).end == nil {
		k.stash(k.frame())
	}
	return *k.cmd(id)
}

// waitCommandStdout reads frames until command id's stdout is want, which
// it must reach before the command ends.
func (k *kernelClient) waitCommandStdout(id uint64, want string) {
	k.t.Helper()
	for r := k.cmd(id); string(r.stdout) != want; {
		if r.end != nil || !strings.HasPrefix(want, string(r.stdout)) {
			k.t.Fatalf("command %d: stdout %q (end %+v), want %q while it runs", id, r.stdout, r.end, want)
		}
		k.stash(k.frame())
	}
}

// command runs req to its end; its Ack must accept it.
func (k *kernelClient) command(req wire.Command) cmdResult {
	k.t.Helper()
	id, a := k.startCommand(req)
	if a.Error != "" || a.PID <= 1 {
		k.t.Fatalf("command %q refused: %+v; log:\n%s", req.Argv, a, k.log)
	}
	return k.waitCommand(id)
}

// shape is what most command tests check.
type cmdShape struct {
	stdout, stderr string
	exitCode       int
	signal         int
	reason         string
	truncated      bool
}

func (r cmdResult) shape() cmdShape {
	return cmdShape{stdout: string(r.stdout), stderr: string(r.stderr), exitCode: r.end.ExitCode, signal: r.end.Signal,
		reason: r.end.Reason, truncated: r.end.StdoutTruncated || r.end.StderrTruncated}
}

func bash(script string) []string { return []string{"/bin/bash", "-l", "-c", script} }

// forgedEnd is the frame a command would need to write on the agent's
// stdout to fake its own end: a clean exit of command id.
func forgedEnd(id uint64) string {
	payload, _ := json.Marshal(wire.CommandEnd{ID: id, Reason: "ok"})
	return string(append(binary.BigEndian.AppendUint32([]byte{byte(wire.TypeCommandEnd)}, uint32(len(payload))), payload...))
}

func TestCommand(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, LanguagePython)
	k := startKernel(t, cfg, map[string]string{"A": "kernel", "B": "kernel"})
	if a := k.writeFile("sub/x", nil); a.Error != "" {
		t.Fatal(a)
	}
	tests := []struct {
		name string
		req  wire.Command
		want cmdShape
	}{
		{name: "echo", req: wire.Command{Argv: bash("echo hi")}, want: cmdShape{stdout: "hi\n", reason: "ok"}},
		{name: "a name on PATH", req: wire.Command{Argv: []string{"echo", "two", "words"}}, want: cmdShape{stdout: "two words\n", reason: "ok"}},
		{name: "exit 3", req: wire.Command{Argv: bash("exit 3")}, want: cmdShape{exitCode: 3, reason: "error"}},
		{name: "stderr", req: wire.Command{Argv: bash("echo oops >&2; exit 1")}, want: cmdShape{stderr: "oops\n", exitCode: 1, reason: "error"}},
		{name: "killed by a signal", req: wire.Command{Argv: []string{"/bin/sh", "-c", "kill -TERM $$"}}, want: cmdShape{exitCode: 143, signal: 15, reason: "killed"}},
		{name: "stdin at its end", req: wire.Command{Argv: []string{"cat"}}, want: cmdShape{reason: "ok"}},
		{
			name: "environment",
			req:  wire.Command{Argv: bash(`echo "$A $B $C $HOME $PATH"`), Env: map[string]string{"B": "request", "C": "request"}},
			want: cmdShape{stdout: "kernel request request " + cfg.Workdir + " " + SearchPath + "\n", reason: "ok"},
		},
		{name: "working directory", req: wire.Command{Argv: []string{"pwd"}}, want: cmdShape{stdout: cfg.Workdir + "\n", reason: "ok"}},
		{name: "a subdirectory", req: wire.Command{Argv: []string{"pwd"}, Dir: "sub"}, want: cmdShape{stdout: cfg.Workdir + "/sub\n", reason: "ok"}},
	}
	for _, tt := range tests {
		if got := k.command(tt.req).shape(); got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}

	// The agent's channel is not among the command's descriptors: what it
	// writes, a frame that would end it cleanly included, is its output,
	// and its wait status its end.
	forged := forgedEnd(k.lastID + 1)
	escaped := ""
	for _, b := range []byte(forged) {
		escaped += fmt.Sprintf(`\x%02x`, b)
	}
	res := k.command(wire.Command{Argv: bash(`printf "$FORGED"; printf "$FORGED" >&2; ls /proc/self/fd; exit 7`), Env: map[string]string{"FORGED": escaped}})
	if got, want := res.shape(), (cmdShape{stdout: forged + "0\n1\n2\n3\n", stderr: forged, exitCode: 7, reason: "error"}); got != want {
		t.Errorf("forged end: got %+v, want %+v", got, want)
	}
}

func TestCommandRefused(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, LanguagePython)
	k := startKernel(t, cfg, nil)
	if err := os.WriteFile(filepath.Join(cfg.Workdir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(cfg.Workdir, "out")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		req  wire.Command
		want ackShape
	}{
		{name: "no argv", req: wire.Command{}, want: ackShape{badRequest: true}},
		{name: "empty program", req: wire.Command{Argv: []string{""}}, want: ackShape{badRequest: true}},
		{name: "NUL in an argument", req: wire.Command{Argv: []string{"echo", "a\x00b"}}, want: ackShape{badRequest: true}},
		{name: "no such program", req: wire.Command{Argv: []string{"no-such-program"}}, want: ackShape{badRequest: true}},
		{name: "no such path", req: wire.Command{Argv: []string{"/no/such/program"}}, want: ackShape{badRequest: true}},
		{name: "bad variable", req: wire.Command{Argv: []string{"true"}, Env: map[string]string{"A=B": "c"}}, want: ackShape{badRequest: true}},
		{name: "negative timeout", req: wire.Command{Argv: []string{"true"}, TimeoutMS: -1}, want: ackShape{badRequest: true}},
		{name: "dir up", req: wire.Command{Argv: []string{"true"}, Dir: ".."}, want: ackShape{badRequest: true, code: wire.FileErrBadPath}},
		{name: "dir absolute", req: wire.Command{Argv: []string{"true"}, Dir: "/etc"}, want: ackShape{badRequest: true, code: wire.FileErrBadPath}},
		{name: "dir through a link out", req: wire.Command{Argv: []string{"true"}, Dir: "out"}, want: ackShape{badRequest: true, code: wire.FileErrBadPath}},
		{name: "dir missing", req: wire.Command{Argv: []string{"true"}, Dir: "missing"}, want: ackShape{notFound: true, code: wire.FileErrNotFound}},
		{name: "dir a file", req: wire.Command{Argv: []string{"true"}, Dir: "file"}, want: ackShape{badRequest: true, code: wire.FileErrNotDir}},
	}
	for _, tt := range tests {
		req := tt.req
		req.ID = k.nextID()
		a := k.call(wire.TypeCommand, req.ID, req)
		if got := shapeOf(a); got != tt.want || a.Error == "" || a.PID != 0 {
			t.Errorf("%s: ack %+v, want %+v", tt.name, a, tt.want)
		}
	}
	if got := k.command(wire.Command{Argv: []string{"true"}}).shape(); got != (cmdShape{reason: "ok"}) {
		t.Errorf("a command after the refusals: %+v", got)
	}
}

func TestCommandLimits(t *testing.T) {
	t.Parallel()
	k := startKernel(t, testConfig(t, LanguagePython), nil)

	// The timer alone ends it: sleep would not for ten minutes.
	res := k.command(wire.Command{Argv: []string{"sleep", "600"}, TimeoutMS: 300})
	if got := res.shape(); got != (cmdShape{exitCode: 137, signal: 9, reason: "timeout"}) || res.end.ExecNS < 300e6 {
		t.Errorf("timeout: %+v after %d ns, want killed by the 300 ms timeout", got, res.end.ExecNS)
	}

	res = k.command(wire.Command{Argv: []string{"yes"}, MaxStdout: 1000})
	if got := res.shape(); got.stdout != strings.Repeat("y\n", 500) || got.exitCode != 137 || got.reason != "output_limit" || !res.end.StdoutTruncated {
		t.Errorf("output cap: %d bytes, end %+v; want 1000 bytes, output_limit", len(got.stdout), res.end)
	}

	// The host's kill request ends it.
	id, a := k.startCommand(wire.Command{Argv: bash("echo started; exec sleep 600")})
	if a.Error != "" {
		t.Fatal(a)
	}
	k.waitCommandStdout(id, "started\n")
	k.send(wire.TypeCommandKill, wire.Request{ID: id})
	if got := k.waitCommand(id).shape(); got != (cmdShape{stdout: "started\n", exitCode: 137, signal: 9, reason: "interrupted"}) {
		t.Errorf("kill: %+v", got)
	}

	// A child left in the background is killed with the command's group
	// once the command is over: it does not hold the command open.
	res = k.command(wire.Command{Argv: bash("sleep 600 & echo $!")})
	if res.end.Reason != "ok" {
		t.Fatalf("background: %+v", res.shape())
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(res.stdout)))
	if err != nil {
		t.Fatalf("background: stdout %q", res.stdout)
	}
	waitGone(t, pid)
}

// TestCommandBesideCells runs a command while a cell runs, each waiting for
// a file the other writes: they share the sandbox and run at once.
func TestCommandBesideCells(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, LanguagePython)
	k := startKernel(t, cfg, nil)
	id, a := k.startCommand(wire.Command{Argv: bash("echo waiting; until [ -e from-cell ]; do sleep 0.01; done; echo from-command > from-command; echo done")})
	if a.Error != "" {
		t.Fatal(a)
	}
	k.waitCommandStdout(id, "waiting\n")
	cell := k.execute(wire.Execute{Code: "import os, time\nopen('from-cell', 'w').close()\nwhile not os.path.exists('from-command'): time.sleep(0.01)\nprint(open('from-command').read(), end='')"})
	cell.mustDone(t, "ok", "ok")
	if got := cell.text("stdout"); got != "from-command\n" {
		t.Errorf("the cell read %q, want what the command wrote", got)
	}
	if got := k.waitCommand(id).shape(); got != (cmdShape{stdout: "waiting\ndone\n", reason: "ok"}) {
		t.Errorf("command: %+v", got)
	}

	// A restart ends the commands still running.
	id, a = k.startCommand(wire.Command{Argv: bash("echo started; exec sleep 600")})
	if a.Error != "" {
		t.Fatal(a)
	}
	k.waitCommandStdout(id, "started\n")
	if a := k.simple(wire.TypeRestart); a.Error != "" {
		t.Fatalf("restart: %+v", a)
	}
	if got := k.waitCommand(id).shape(); got != (cmdShape{stdout: "started\n", exitCode: 137, signal: 9, reason: "interrupted"}) {
		t.Errorf("after a restart: %+v", got)
	}
}

func TestCommandAsUser(t *testing.T) {
	t.Parallel()
	prereq.Root(t, "(to switch users)")
	cfg := testConfig(t, LanguagePython)
	cfg.UID, cfg.GID = 1000, 1000
	cfg.Workdir = userWorkdir(t)
	k := startKernel(t, cfg, nil)
	res := k.command(wire.Command{Argv: bash("id -u; id -g; id -G; echo made > made.txt")})
	if got := res.shape(); got != (cmdShape{stdout: "1000\n1000\n1000\n", reason: "ok"}) {
		t.Errorf("got %+v", got)
	}
	a := k.readFile("made.txt", 0)
	if !bytes.Equal(a.Content, []byte("made\n")) {
		t.Errorf("made.txt: %+v", a)
	}
}
