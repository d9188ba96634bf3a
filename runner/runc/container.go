//go:build linux && cgo

package runc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	// The device rules of a container's cgroup are set by this package
	// only when it is linked in.
	_ "github.com/opencontainers/cgroups/devices"
	"github.com/opencontainers/runc/libcontainer"
	"golang.org/x/sys/unix"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/ocispec"
)

// container is one sandbox's libcontainer container, its init process
// (the agent) and the host ends of the agent's stdio.
type container struct {
	rt     *Runtime
	id     string
	bundle string
	c      *libcontainer.Container
	exited chan struct{} // closed once the init process is reaped

	toAgent   *os.File
	fromAgent *os.File
	agentLog  *os.File
}

// launch mounts the sandbox's root, creates container id from spec's OCI
// rendering and starts the agent as its init, with fresh pipes as its
// stdio. What it made is undone when it fails.
func (rt *Runtime) launch(id string, spec runner.Spec) (_ *container, err error) {
	bundle := filepath.Join(rt.bundles, id)
	// Every runc sandbox starts at the batch CPU weight, background ones
	// too: nothing here lowers it while one comes up.
	spec.Background = false
	oci := ocispec.Render(id, spec, rt.agentDir)
	lim := ocispec.WithDefaults(spec.Limits)
	undo := func() error { return errors.Join(unmountLayer(bundle), os.RemoveAll(bundle)) }
	root, err := mountLayer(bundle, spec.Rootfs, lim.DiskBytes)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("preparing the root of %s: %w", id, err), undo())
	}
	cfg, err := containerConfig(id, oci, root, lim.Processes)
	if err != nil {
		return nil, errors.Join(err, undo())
	}
	c, err := libcontainer.Create(rt.root, id, cfg)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("creating container %s: %w", id, err), undo())
	}
	undo = func() error {
		return errors.Join(c.Destroy(), unmountLayer(bundle), os.RemoveAll(bundle))
	}
	// The container reads stdinR and writes stdoutW and stderrW; the host
	// keeps the other ends.
	var pipes [3][2]*os.File
	for i := range pipes {
		r, w, err := os.Pipe()
		if err != nil {
			closeFiles(pipes[:i]...)
			return nil, errors.Join(err, undo())
		}
		pipes[i] = [2]*os.File{r, w}
	}
	proc := &libcontainer.Process{
		Args:   append(slices.Clone(oci.Process.Args), "--host-kernel"),
		Env:    oci.Process.Env,
		Cwd:    oci.Process.Cwd,
		UID:    int(oci.Process.User.UID),
		GID:    int(oci.Process.User.GID),
		Stdin:  pipes[0][0],
		Stdout: pipes[1][1],
		Stderr: pipes[2][1],
		Init:   true,
	}
	runErr := c.Run(proc)
	// The container holds its own copies now; ours would keep the pipes
	// open after it dies.
	for _, f := range []*os.File{pipes[0][0], pipes[1][1], pipes[2][1]} {
		_ = f.Close()
	}
	if runErr != nil {
		_ = proc.Signal(unix.SIGKILL)
		_, _ = proc.Wait()
		for _, f := range []*os.File{pipes[0][1], pipes[1][0], pipes[2][0]} {
			_ = f.Close()
		}
		return nil, errors.Join(fmt.Errorf("starting container %s: %w", id, runErr), undo())
	}
	ct := &container{
		rt: rt, id: id, bundle: bundle, c: c, exited: make(chan struct{}),
		toAgent: pipes[0][1], fromAgent: pipes[1][0], agentLog: pipes[2][0],
	}
	go func() {
		// The agent is this process's child: reap it. Its exit ends the
		// container (its PID namespace dies with it).
		_, _ = proc.Wait()
		close(ct.exited)
	}()
	return ct, nil
}

// destroy kills the container's init, which takes every process of its
// PID namespace with it, waits until it is reaped, then removes the
// container's cgroup and state, the root's mounts and the bundle.
func (ct *container) destroy(ctx context.Context) error {
	err := ct.c.Signal(unix.SIGKILL)
	if errors.Is(err, libcontainer.ErrNotRunning) {
		err = nil
	}
	select {
	case <-ct.exited:
	case <-ctx.Done():
		return errors.Join(err, fmt.Errorf("waiting for container %s to die: %w", ct.id, ctx.Err()))
	}
	return errors.Join(err, ct.rt.remove(ct.c, ct.id))
}

// remove removes a dead container: its mounts first (the writable layer's
// pages are charged to its memory cgroup), then libcontainer's cgroup and
// state, then the bundle.
func (rt *Runtime) remove(c *libcontainer.Container, id string) error {
	bundle := filepath.Join(rt.bundles, id)
	var errs []error
	errs = append(errs, unmountLayer(bundle))
	for deadline := time.Now().Add(destroyGrace); ; {
		err := c.Destroy()
		if err == nil || time.Now().After(deadline) {
			errs = append(errs, err)
			break
		}
		// A killed task can stay in its cgroup for a moment as it exits.
		time.Sleep(10 * time.Millisecond)
	}
	errs = append(errs, os.RemoveAll(bundle))
	return errors.Join(errs...)
}

// destroyGrace bounds the wait for a killed container's cgroup to empty.
const destroyGrace = 30 * time.Second

func closeFiles(pairs ...[2]*os.File) {
	for _, p := range pairs {
		_ = p[0].Close()
		_ = p[1].Close()
	}
}
