package e2bdoor

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

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

// process serves envd's process.Process: Start runs a command in the
// main context's sandbox, streamed.
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
	cmd, err := commandOf(sandboxOf(c), req)
	if err != nil {
		failConnect(c, err)
		return
	}
	if d.cmd == nil {
		failConnect(c, unsupported("commands are not served yet: this Paddock runs code (runCode) and files, not shell commands"))
		return
	}
	d.startProcess(c, cmd)
}

// commandOf checks a Start request and maps its directory onto the
// workspace; the sandbox's envVars come first, the call's win.
func commandOf(sb *sandbox, req startRequest) (Command, error) {
	switch {
	case req.PTY != nil:
		return Command{}, unsupported("PTY sessions are not served by Paddock")
	case req.Stdin != nil && *req.Stdin:
		return Command{}, unsupported("stdin for commands is not served by Paddock: pass input in the command line or a file")
	case req.Process.Cmd == "":
		return Command{}, invalid("process.cmd is required")
	}
	dir := ""
	if req.Process.Cwd != nil && *req.Process.Cwd != "" {
		rel, err := workspacePath(*req.Process.Cwd)
		if err != nil {
			return Command{}, err
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
	return Command{Cmd: req.Process.Cmd, Args: req.Process.Args, Env: env, Dir: dir}, nil
}

type processEvent struct {
	Event any `json:"event"`
}

func (d *door) startProcess(c *gin.Context, cmd Command) {
	sb := sandboxOf(c)
	ctx := c.Request.Context()
	if t := timeoutOfCall(c); t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	s := newStream(c)
	s.send(processEvent{map[string]any{"start": map[string]uint32{"pid": d.pids.Add(1)}}})
	stop := d.keepalive(c, s)
	res, err := d.cmd.Command(ctx, sb.owner, sb.id, cmd, func(st runner.Stream, b []byte) {
		s.send(processEvent{map[string]any{"data": map[string]string{string(st): base64.StdEncoding.EncodeToString(b)}}})
	})
	stop()
	d.touch(sb, sb.id)
	if err != nil {
		s.endWith(err)
		return
	}
	status := res.Status
	if status == "" {
		status = "exit status " + strconv.Itoa(res.ExitCode)
	}
	end := map[string]any{"exitCode": res.ExitCode, "exited": true, "status": status}
	if res.ExitCode != 0 {
		end["error"] = status
	}
	s.send(processEvent{map[string]any{"end": end}})
	s.end(nil)
}

// keepalive sends a keepalive event at the interval the client asked
// (Keepalive-Ping-Interval, seconds) until the returned stop is called.
func (d *door) keepalive(c *gin.Context, s *stream) (stop func()) {
	secs, err := strconv.Atoi(c.GetHeader("Keepalive-Ping-Interval"))
	if err != nil || secs <= 0 {
		return func() {}
	}
	every := max(time.Duration(secs)*time.Second, keepaliveMin)
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
// (mkdir -p, rm -rf), so it needs the commander too.
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
	cmd := Command{Cmd: "/bin/mkdir", Args: []string{"-p", "--", sandboxPath(rel)}}
	if method == "Remove" {
		cmd = Command{Cmd: "/bin/rm", Args: []string{"-rf", "--", sandboxPath(rel)}}
	}
	d.runQuiet(c, method, cmd, func() any {
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
	cmd := Command{Cmd: "/bin/mv", Args: []string{"-T", "--", sandboxPath(src), sandboxPath(dst)}}
	d.runQuiet(c, "Move", cmd, func() any {
		return map[string]any{"entry": entryInfo{Name: baseName(dst), Type: "FILE_TYPE_FILE", Path: e2bPath(dst),
			Owner: fileOwner, Group: fileOwner}}
	})
}

// runQuiet runs a helper command for a unary filesystem method and
// answers answer() when it exits 0.
func (d *door) runQuiet(c *gin.Context, method string, cmd Command, answer func() any) {
	if d.cmd == nil {
		failConnect(c, unsupported("filesystem."+method+" needs shell commands, which this Paddock does not serve yet"))
		return
	}
	sb := sandboxOf(c)
	var stderr []byte
	res, err := d.cmd.Command(c.Request.Context(), sb.owner, sb.id, cmd, func(st runner.Stream, b []byte) {
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
