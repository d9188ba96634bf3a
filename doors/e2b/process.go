package e2bdoor

import (
	"encoding/base64"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/runner"
)

// startRequest is envd's process.StartRequest.
type startRequest struct {
	Process struct {
		Cmd  string            `json:"cmd"`
		Args []string          `json:"args"`
		Envs map[string]string `json:"envs"`
		Cwd  *string           `json:"cwd"`
	} `json:"process"`
	PTY   *struct{} `json:"pty"`
	Tag   *string   `json:"tag"`
	Stdin *bool     `json:"stdin"`
}

// keepaliveMin bounds how often a stream sends keepalives.
const keepaliveMin = time.Second

// process serves envd's process.Process: Start runs a command beside the
// main context's kernel, in its sandbox, streamed.
func (d *door) process(c *gin.Context) {
	if c.Param("method") != "Start" {
		unknownMethod(c, "process.Process")
		return
	}
	var req startRequest
	if err := d.readStreamRequest(c, &req); err != nil {
		failConnect(c, err)
		return
	}
	in, err := d.commandOf(c, sandboxOf(c), req)
	if err != nil {
		failConnect(c, err)
		return
	}
	d.startProcess(c, in)
}

// commandOf checks a Start request and maps its directory onto the
// workspace; the sandbox's envVars come first, the call's win.
func (d *door) commandOf(c *gin.Context, sb *sandbox, req startRequest) (core.CommandInput, error) {
	switch {
	case req.PTY != nil:
		return core.CommandInput{}, unsupported("PTY sessions are not served by Paddock")
	case req.Stdin != nil && *req.Stdin:
		return core.CommandInput{}, unsupported("stdin for commands is not served by Paddock: pass input in the command line or a file")
	case req.Process.Cmd == "":
		return core.CommandInput{}, invalid("process.cmd is required")
	}
	dir := ""
	if req.Process.Cwd != nil && *req.Process.Cwd != "" {
		rel, err := workspacePath(*req.Process.Cwd)
		if err != nil {
			return core.CommandInput{}, err
		}
		if rel != "." {
			dir = rel
		}
	}
	env := maps.Clone(sb.env)
	if env == nil {
		env = map[string]string{}
	}
	maps.Copy(env, req.Process.Envs)
	return core.CommandInput{
		Argv:    append([]string{req.Process.Cmd}, req.Process.Args...),
		Env:     env,
		Dir:     dir,
		Timeout: d.commandTimeout(timeoutOfCall(c)),
	}, nil
}

// commandTimeout is the client's timeout up to the server's maximum, or
// the maximum when the client gave none.
func (d *door) commandTimeout(asked time.Duration) time.Duration {
	most := d.cfg.MaxCommandTimeout
	if asked > 0 && (most == 0 || asked < most) {
		return asked
	}
	return most
}

type processEvent struct {
	Event any `json:"event"`
}

func (d *door) startProcess(c *gin.Context, in core.CommandInput) {
	sb := sandboxOf(c)
	s := newStream(c)
	// The start event carries the PID the agent saw the command start
	// with; a command that never started gets none, only the error.
	in.Started = func(pid int) { s.send(processEvent{map[string]any{"start": map[string]int{"pid": pid}}}) }
	stop := d.keepalive(c, s)
	res, err := d.core.Command(c.Request.Context(), sb.owner, sb.id, in, func(st runner.Stream, b []byte) {
		s.send(processEvent{map[string]any{"data": map[string]string{string(st): base64.StdEncoding.EncodeToString(b)}}})
	})
	stop()
	d.touch(sb, sb.id)
	if err != nil {
		s.endWith(err)
		return
	}
	status := statusOf(res)
	end := map[string]any{"exitCode": res.ExitCode, "exited": res.Signal == 0, "status": status}
	if res.ExitCode != 0 {
		end["error"] = status
	}
	s.send(processEvent{map[string]any{"end": end}})
	s.end(nil)
}

// statusOf describes how a command ended, in envd's words where it has
// them.
func statusOf(res runner.CommandResult) string {
	switch res.Reason {
	case runner.ReasonTimeout:
		return "timeout: the command was killed at its time limit"
	case runner.ReasonOutputLimit:
		return "output limit: the command was killed past the server's output cap"
	case runner.ReasonInterrupted:
		return "interrupted"
	}
	if res.Signal != 0 {
		return "signal: " + strconv.Itoa(res.Signal)
	}
	return "exit status " + strconv.Itoa(res.ExitCode)
}

// keepalive sends a keepalive event at the interval the client asked
// (Keepalive-Ping-Interval, seconds) until the returned stop is called.
func (d *door) keepalive(c *gin.Context, s *stream) (stop func()) {
	secs, err := strconv.Atoi(c.GetHeader("Keepalive-Ping-Interval"))
	if err != nil || secs <= 0 {
		return func() {}
	}
	every := max(core.Scaled(int64(secs), time.Second), keepaliveMin)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				s.send(processEvent{map[string]any{"keepalive": struct{}{}}})
			}
		}
	}()
	return func() { close(done); <-finished }
}

// fsCommand serves MakeDir and Remove with a command in the sandbox
// (mkdir -p, rm -rf): the core has no file call for them.
func (d *door) fsCommand(c *gin.Context, method string) {
	var req pathRequest
	if err := d.readUnary(c, &req); err != nil {
		failConnect(c, err)
		return
	}
	rel, err := workspacePath(req.Path)
	if err == nil && rel == "." {
		err = invalid(fmt.Sprintf("%s of the home directory itself is refused", method))
	}
	if err != nil {
		failConnect(c, err)
		return
	}
	argv := []string{"/bin/mkdir", "-p", "--", sandboxPath(rel)}
	if method == "Remove" {
		argv = []string{"/bin/rm", "-rf", "--", sandboxPath(rel)}
	}
	d.runQuiet(c, method, argv, func() any {
		if method == "Remove" {
			return struct{}{}
		}
		return map[string]any{"entry": entryInfo{Name: baseName(rel), Type: "FILE_TYPE_DIRECTORY", Path: e2bPath(rel),
			Mode: 1<<31 | 0o755, Permissions: "drwxr-xr-x", Owner: fileOwner, Group: fileOwner}}
	})
}

func (d *door) move(c *gin.Context) {
	var req moveRequest
	if err := d.readUnary(c, &req); err != nil {
		failConnect(c, err)
		return
	}
	src, err := workspacePath(req.Source)
	if err != nil {
		failConnect(c, err)
		return
	}
	dst, err := workspacePath(req.Destination)
	if err != nil {
		failConnect(c, err)
		return
	}
	argv := []string{"/bin/mv", "-T", "--", sandboxPath(src), sandboxPath(dst)}
	d.runQuiet(c, "Move", argv, func() any {
		return map[string]any{"entry": entryInfo{Name: baseName(dst), Type: "FILE_TYPE_FILE", Path: e2bPath(dst),
			Owner: fileOwner, Group: fileOwner}}
	})
}

// runQuiet runs a helper command for a unary filesystem method and
// answers answer() when it exits 0; a failure carries its stderr.
func (d *door) runQuiet(c *gin.Context, method string, argv []string, answer func() any) {
	sb := sandboxOf(c)
	var stderr []byte
	res, err := d.core.Command(c.Request.Context(), sb.owner, sb.id, core.CommandInput{Argv: argv}, func(st runner.Stream, b []byte) {
		if st == runner.Stderr && len(stderr) < 4096 {
			stderr = append(stderr, b...)
		}
	})
	if err == nil && res.ExitCode != 0 {
		err = invalid(fmt.Sprintf("%s failed: %s", method, stderr))
	}
	if err != nil {
		failConnect(c, err)
		return
	}
	d.touch(sb, sb.id)
	c.JSON(200, answer())
}

func baseName(rel string) string {
	for i := len(rel) - 1; i >= 0; i-- {
		if rel[i] == '/' {
			return rel[i+1:]
		}
	}
	return rel
}
