package runsc

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"time"
)

// Runsc runs the runsc binary with a fixed set of global flags.
type Runsc struct {
	// Path is the runsc binary.
	Path string
	// Root is runsc's state directory; Paddock owns it exclusively.
	Root string
	// Platform is the gVisor platform ("systrap", "ptrace").
	Platform string
	// DebugLog, when set, runs every invocation with --debug and has runsc
	// write its logs into this directory: one file per command and per
	// sandbox or gofer process it starts (runsc names them).
	DebugLog string
	Logger   *slog.Logger
	// Observe, when set, is told about every invocation once it has ended,
	// failed ones too, in the goroutine that ran it (so possibly in
	// several at once). It is for measurement (the bench's CPU phases);
	// nil costs a time.Now per invocation.
	Observe func(Invocation)
}

// Invocation is one finished runsc command as Observe sees it.
type Invocation struct {
	Argv []string
	Wall time.Duration
	// CPU is the host CPU time (user + system) of the runsc process and of
	// the children it waited for; the sandbox and gofer a detached run or
	// restore leaves behind are not among them.
	CPU time.Duration
}

// global renders the flags every invocation carries.
func (r *Runsc) global() []string {
	args := []string{"--root=" + r.Root}
	if r.Platform != "" {
		args = append(args, "--platform="+r.Platform)
	}
	if r.DebugLog != "" {
		// A trailing slash makes runsc treat it as a directory.
		args = append(args, "--debug", "--debug-log="+strings.TrimSuffix(r.DebugLog, "/")+"/")
	}
	return args
}

// argv is the full argument list (without the binary) of one invocation.
func (r *Runsc) argv(extraGlobal []string, sub string, subArgs ...string) []string {
	args := append(r.global(), extraGlobal...)
	args = append(args, sub)
	return append(args, subArgs...)
}

// stdio are the descriptors handed to a runsc invocation; nil means /dev/null.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

// run executes one invocation and returns its stdout. A failure carries
// runsc's stderr.
func (r *Runsc) run(ctx context.Context, argv []string, io stdio) ([]byte, error) {
	r.Logger.Debug("runsc", "argv", argv)
	cmd := exec.CommandContext(ctx, r.Path, argv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdin = io.in
	cmd.Stdout = &stdout
	if io.out != nil {
		cmd.Stdout = io.out
	}
	cmd.Stderr = &stderr
	if io.err != nil {
		cmd.Stderr = io.err
	}
	begin := time.Now()
	err := startNiced(cmd)
	if err == nil {
		err = cmd.Wait()
	}
	if r.Observe != nil {
		r.observe(cmd, argv, time.Since(begin))
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 2048 {
			msg = msg[len(msg)-2048:]
		}
		return nil, fmt.Errorf("runsc %s: %w: %s", sub(argv), err, msg)
	}
	return stdout.Bytes(), nil
}

// sub names the subcommand of argv, for error messages.
func sub(argv []string) string {
	for _, a := range argv {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return "?"
}

func (r *Runsc) observe(cmd *exec.Cmd, argv []string, wall time.Duration) {
	inv := Invocation{Argv: argv, Wall: wall}
	if ps := cmd.ProcessState; ps != nil {
		inv.CPU = ps.UserTime() + ps.SystemTime()
	}
	r.Observe(inv)
}
