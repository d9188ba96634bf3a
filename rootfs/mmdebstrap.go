package rootfs

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// mmdebstrapGrace is how long mmdebstrap gets to unmount and clean up
// after a cancelled build asks it to stop, before it is killed.
const mmdebstrapGrace = 30 * time.Second

// mmdebstrapPath finds the mmdebstrap program.
func (b *Builder) mmdebstrapPath() (string, error) {
	if b.mmdebstrap != "" {
		return b.mmdebstrap, nil
	}
	path, err := exec.LookPath("mmdebstrap")
	if err != nil {
		return "", ErrNoMmdebstrap
	}
	return path, nil
}

// runMmdebstrap runs mmdebstrap with args, forwarding its output to prog
// and writing a heartbeat while it is quiet. Cancelling ctx asks it to
// stop with SIGTERM so that it can unmount what it mounted in the chroot.
func (b *Builder) runMmdebstrap(ctx context.Context, prog *progress, bin string, args []string, start time.Time) error {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = mmdebstrapGrace
	cmd.Env = toolEnv()
	cmd.Stdout = prog
	cmd.Stderr = prog
	every := b.heartbeat
	if every <= 0 {
		every = defaultHeartbeat
	}
	stop := prog.heartbeat(every, start)
	err := cmd.Run()
	stop()
	prog.flush()
	if ctx.Err() != nil {
		return fmt.Errorf("running mmdebstrap: %w", ctx.Err())
	}
	if err != nil {
		return fmt.Errorf("running mmdebstrap: %w\n%s", err, prog.toolTail())
	}
	return nil
}

// toolEnv is this process's environment with the locale forced to
// C.UTF-8, which every Debian chroot has: the host's locale may not exist
// inside and would make every maintainer script complain.
func toolEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "LANG=") || strings.HasPrefix(kv, "LANGUAGE=") || strings.HasPrefix(kv, "LC_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "LC_ALL=C.UTF-8")
}
