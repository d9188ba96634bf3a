package agent

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/paddock-dev/paddock/runner/wire"
)

// Commands beside a kernel (wire.Command): a program the host names, with
// its arguments, started as the sandbox's user in a process group of its
// own, with stdin at its end and its output forwarded under per-stream
// caps, tagged with the request's ID. The agent reaps it: the wait status
// alone gives the exit code, the signal and, with the agent's own timer,
// caps and the host's kill request, the reason. Its process group is
// killed when it ends, so that a background child does not hold its
// output open; processes that left the group live until the sandbox ends
// (or the kernel restarts, which kills every user process). A command
// ends as interrupted when the host asked the agent to end it (its caller
// went away) or the kernel restarted or shut down.

// command is one running command. Its entry in kernel.cmds is guarded by
// the kernel's mu; end is safe for concurrent use.
type command struct {
	id  uint64
	pid int
	end *ender
}

// command starts the command in f and acks it with its PID, or refuses it.
func (k *kernel) command(f wire.Frame) error {
	start := time.Now()
	var req wire.Command
	if ok, err := k.decode(f, &req); !ok {
		return err
	}
	refuse := func(badRequest bool, err error) error {
		return k.s.ack(wire.Ack{ID: req.ID, Error: err.Error(), BadRequest: badRequest})
	}
	if err := checkCommand(req); err != nil {
		return refuse(true, err)
	}
	k.mu.Lock()
	lost, dup := k.lost || k.proc == nil, k.cmds[req.ID] != nil
	k.mu.Unlock()
	switch {
	case lost:
		return refuse(false, ErrKernelLost)
	case dup:
		return refuse(true, fmt.Errorf("command %d is already running: %w", req.ID, ErrBadRequest))
	}
	path, err := lookProgram("program", req.Argv[0])
	if err != nil {
		return refuse(true, err)
	}
	dir, err := k.s.files.WorkDir(req.Dir)
	if err != nil {
		return k.s.ack(fileAck(req.ID, err))
	}
	cfg := k.s.agent.cfg
	ours, theirs, err := userPipes(cfg, []bool{false, true, true})
	if err != nil {
		return refuse(false, err)
	}
	ours[0].Close() // stdin: at its end from the start
	pid, status, err := spawnUser(k.s.reaper, cfg, path, req.Argv, commandEnv(cfg.Workdir, k.env, req.Env), dir, theirs)
	if err != nil {
		closeFiles(ours[1:])
		return refuse(!errors.Is(err, syscall.EAGAIN), err)
	}
	c := &command{id: req.ID, pid: pid, end: &ender{kill: func() { k.killGroup(pid) }}}
	k.mu.Lock()
	k.cmds[c.id] = c
	k.mu.Unlock()
	k.log.Info("command started", "id", c.id, "pid", pid, "program", path)
	// The Ack goes first: the command's output and end follow it.
	err = k.s.ack(wire.Ack{ID: req.ID, PID: pid})
	go k.runCommand(c, req, [2]*os.File{ours[1], ours[2]}, status, start)
	return err
}

// runCommand forwards c's output until it has ended and reports its end.
func (k *kernel) runCommand(c *command, req wire.Command, streams [2]*os.File, status <-chan reaped, start time.Time) {
	defer closeFiles(streams[:])
	limits := [2]int64{outputLimit(req.MaxStdout), outputLimit(req.MaxStderr)}
	tags := [2]byte{wire.StreamStdout, wire.StreamStderr}
	var done [2]<-chan pumpResult
	for i, f := range streams {
		ch := make(chan pumpResult, 1)
		done[i] = ch
		s := sink{
			limit: limits[i],
			send: func(b []byte) error {
				return k.s.w.Write(wire.TypeCommandOutput, wire.AppendCommandOutput(nil, wire.CommandOutput{ID: c.id, Stream: tags[i], Data: b}))
			},
			over: func() { c.end.end(reasonOutputLimit) },
		}
		go func() { ch <- (&pump{f: f}).forward(s, nil) }()
	}
	stopTimer := func() bool { return false }
	if req.TimeoutMS > 0 {
		stopTimer = time.AfterFunc(time.Duration(req.TimeoutMS)*time.Millisecond, func() { c.end.end(reasonTimeout) }).Stop
	}
	r := <-status
	exec := time.Since(start)
	stopTimer()
	res := drainStreams(streams, done, func() { k.killGroup(c.pid) })
	k.mu.Lock()
	delete(k.cmds, c.id)
	k.mu.Unlock()
	for _, pr := range res {
		if pr.err != nil {
			k.log.Debug("forwarding command output", "id", c.id, "err", pr.err)
		}
	}
	e := exitFrame(r.status, c.end.why(), res[0], res[1], exec)
	k.log.Info("command ended", "id", c.id, "reason", e.Reason, "exit_code", e.ExitCode, "signal", e.Signal)
	end := wire.CommandEnd{ID: c.id, ExitCode: e.ExitCode, Signal: e.Signal, Reason: e.Reason,
		StdoutTruncated: e.StdoutTruncated, StderrTruncated: e.StderrTruncated, ExecNS: e.ExecNS}
	if err := k.sendJSON(wire.TypeCommandEnd, end); err != nil {
		k.log.Debug("sending a command's end", "id", c.id, "err", err)
	}
}

// killCommand ends the command the request in f names, if it runs; its
// CommandEnd is the answer.
func (k *kernel) killCommand(f wire.Frame) error {
	var req wire.Request
	if ok, err := k.decode(f, &req); !ok {
		return err
	}
	k.mu.Lock()
	c := k.cmds[req.ID]
	k.mu.Unlock()
	if c != nil {
		c.end.end(reasonInterrupted)
	}
	return nil
}

// endCommands ends every running command: the kernel restarts or shuts
// down.
func (k *kernel) endCommands() {
	k.mu.Lock()
	cmds := slices.Collect(maps.Values(k.cmds))
	k.mu.Unlock()
	for _, c := range cmds {
		c.end.end(reasonInterrupted)
	}
}

// killGroup kills the process group of a command, whose leader is pgid.
func (k *kernel) killGroup(pgid int) {
	if err := killGroup(pgid); err != nil {
		k.log.Warn("killing a command", "pgid", pgid, "err", err)
	}
}

// checkCommand rejects a request the agent cannot start.
func checkCommand(req wire.Command) error {
	switch {
	case len(req.Argv) == 0 || req.Argv[0] == "":
		return fmt.Errorf("no program to run: %w", ErrBadRequest)
	case req.TimeoutMS < 0 || req.MaxStdout < 0 || req.MaxStderr < 0:
		return fmt.Errorf("negative timeout or output cap: %w", ErrBadRequest)
	}
	for _, a := range req.Argv {
		if strings.ContainsRune(a, 0) {
			return fmt.Errorf("argument %q contains NUL: %w", a, ErrBadRequest)
		}
	}
	return checkEnv(req.Env)
}

// commandEnv is a command's environment: the interpreter's, the kernel's
// variables over it, the request's over both.
func commandEnv(workdir string, kernel, req map[string]string) []string {
	env := map[string]string{}
	for _, kv := range interpreterEnv(workdir) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	maps.Copy(env, kernel)
	maps.Copy(env, req)
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}
