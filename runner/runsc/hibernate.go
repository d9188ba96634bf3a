package runsc

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/paddock-dev/paddock/runner"
)

var _ runner.Hibernator = (*Runtime)(nil)

// Hibernate checkpoints sb into dir (made here, 0700; the image's files
// are made 0600) and stops it. Pages the sandbox committed but never
// wrote are left out of the image.
func (rt *Runtime) Hibernate(ctx context.Context, sb runner.Sandbox, dir string) error {
	// The kernel's end, when the checkpoint stops the sandbox, is planned.
	c, _ := sb.(interface{ ExpectEnd(bool) })
	if c != nil {
		c.ExpectEnd(true)
	}
	err := rt.checkpoint(ctx, sb, dir, false)
	if err != nil && c != nil {
		c.ExpectEnd(false)
	}
	return err
}

// Keep checkpoints sb into dir as Hibernate does, and leaves it running.
func (rt *Runtime) Keep(ctx context.Context, sb runner.Sandbox, dir string) error {
	return rt.checkpoint(ctx, sb, dir, true)
}

func (rt *Runtime) checkpoint(ctx context.Context, sb runner.Sandbox, dir string, leaveRunning bool) error {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("hibernating %s: %w", sb.ID(), err)
	}
	if err := rt.saveArgs(sb.ID(), dir); err != nil {
		return fmt.Errorf("hibernating %s: %w", sb.ID(), err)
	}
	if err := rt.runsc.CheckpointWith(ctx, sb.ID(), dir, CheckpointOpts{LeaveRunning: leaveRunning, ExcludeZeroPages: true}); err != nil {
		return fmt.Errorf("hibernating %s: %w", sb.ID(), err)
	}
	if _, err := os.Stat(filepath.Join(dir, imageMarker)); err != nil {
		return fmt.Errorf("hibernating %s: runsc wrote no image: %w", sb.ID(), err)
	}
	return restrict(dir)
}

// Wake restores a sandbox of spec from the image in dir.
func (rt *Runtime) Wake(ctx context.Context, dir string, spec runner.Spec) (runner.Sandbox, error) {
	spec, err := withSavedWarmup(spec, dir)
	if err != nil {
		return nil, fmt.Errorf("waking %s: %w", dir, err)
	}
	return rt.Restore(ctx, runner.Snapshot{Path: dir, Spec: spec})
}

// restrict makes every file under dir readable by its owner only: an
// image holds a tenant's data.
func restrict(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		mode := fs.FileMode(0o600)
		if d.IsDir() {
			mode = 0o700
		}
		return os.Chmod(p, mode)
	})
}
