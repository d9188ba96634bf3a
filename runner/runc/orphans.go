//go:build linux && cgo

package runc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/cgroups/manager"
	"github.com/opencontainers/runc/libcontainer"
	"golang.org/x/sys/unix"

	"github.com/paddock-dev/paddock/runner/ocispec"
)

// Cleanup destroys every container under the runtime's state directory:
// orphans of an earlier server that died without cleaning up, whether
// libcontainer saved their state or the server died while creating them
// (then their cgroups and mounts are found by the container's name). It
// returns how many it destroyed.
func (rt *Runtime) Cleanup(ctx context.Context) (int, error) {
	ids, err := rt.stateIDs()
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, id := range ids {
		errs = append(errs, rt.destroyStale(ctx, id))
	}
	bundles, err := os.ReadDir(rt.bundles)
	errs = append(errs, err)
	n := len(ids)
	for _, b := range bundles {
		if slices.Contains(ids, b.Name()) {
			continue
		}
		n++
		errs = append(errs, removeCgroup(b.Name()), unmountLayer(filepath.Join(rt.bundles, b.Name())),
			os.RemoveAll(filepath.Join(rt.bundles, b.Name())))
	}
	return n, errors.Join(errs...)
}

// ReapOthers destroys every container under the state directory whose
// label is not value: those of another server instance. It returns how
// many it destroyed.
func (rt *Runtime) ReapOthers(ctx context.Context, label, value string) (int, error) {
	ids, err := rt.stateIDs()
	if err != nil {
		return 0, err
	}
	// specconv turns each annotation into a label "KEY=VALUE".
	want := ocispec.LabelPrefix + label + "=" + value
	n := 0
	var errs []error
	for _, id := range ids {
		c := rt.load(id)
		if c == nil {
			continue // being created, or gone meanwhile
		}
		if slices.Contains(c.Config().Labels, want) {
			continue
		}
		n++
		errs = append(errs, rt.destroyStale(ctx, id))
	}
	return n, errors.Join(errs...)
}

// Close releases nothing: every host mount belongs to a sandbox.
func (rt *Runtime) Close() error { return nil }

// load opens container id from the state root, nil when it has no state.
func (rt *Runtime) load(id string) *libcontainer.Container {
	c, err := libcontainer.Load(rt.root, id)
	if err != nil {
		return nil
	}
	return c
}

// stateIDs lists the containers libcontainer holds state for.
func (rt *Runtime) stateIDs() ([]string, error) {
	ents, err := os.ReadDir(rt.root)
	if err != nil {
		return nil, fmt.Errorf("listing containers: %w", err)
	}
	var ids []string
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), "pd-") {
			ids = append(ids, e.Name())
		}
	}
	return ids, nil
}

// destroyStale kills and removes container id, which this process did not
// start: its init is another process's child, so its end is watched in
// /proc rather than waited for.
func (rt *Runtime) destroyStale(ctx context.Context, id string) error {
	c := rt.load(id)
	if c == nil {
		// No saved state: the server died while creating it.
		return errors.Join(removeCgroup(id), unmountLayer(filepath.Join(rt.bundles, id)),
			os.RemoveAll(filepath.Join(rt.bundles, id)), os.RemoveAll(filepath.Join(rt.root, id)))
	}
	if err := c.Signal(unix.SIGKILL); err != nil && !errors.Is(err, libcontainer.ErrNotRunning) {
		return fmt.Errorf("killing container %s: %w", id, err)
	}
	deadline := time.Now().Add(destroyGrace)
	for {
		st, err := c.Status()
		if err != nil || st == libcontainer.Stopped {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("container %s outlived SIGKILL", id)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return rt.remove(c, id)
}

// removeCgroup kills whatever is left in container id's cgroup and removes
// it: for a container whose creation was cut short.
func removeCgroup(id string) error {
	m, err := manager.New(&cgroups.Cgroup{Path: cgroupParent + "/" + id, Resources: &cgroups.Resources{}})
	if err != nil {
		return fmt.Errorf("cgroup of %s: %w", id, err)
	}
	if !m.Exists() {
		return nil
	}
	deadline := time.Now().Add(destroyGrace)
	for {
		pids, _ := m.GetAllPids()
		for _, pid := range pids {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		err := m.Destroy()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
}
