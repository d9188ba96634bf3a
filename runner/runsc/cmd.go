package runsc

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strings"
)

// Runsc runs the runsc binary with a fixed set of global flags.
type Runsc struct {
	// Path is the runsc binary.
	Path string
	// Root is runsc's state directory; Paddock owns it exclusively.
	Root string
	// Platform is the gVisor platform ("systrap", "ptrace").
	Platform string
	Logger   *slog.Logger
}

// global renders the flags every invocation carries.
func (r *Runsc) global() []string {
	args := []string{"--root=" + r.Root}
	if r.Platform != "" {
		args = append(args, "--platform="+r.Platform)
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
	err := startNiced(cmd)
	if err == nil {
		err = cmd.Wait()
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
