package runner

import (
	"context"
	"errors"
)

// Hibernator is an optional ability of a Runtime, found by type assertion:
// it saves the whole state of a live sandbox (its processes' memory, the
// files of its writable layer) into a directory and stops it, and later
// brings a sandbox back from that image. A session's kernel survives the
// round trip: the woken sandbox's KernelAttacher takes it over.
type Hibernator interface {
	// Hibernate writes sb's image into dir, which must not exist yet and
	// is made with mode 0700, and stops sb. The caller still destroys sb.
	// Nothing may be running in sb but what waits for the host.
	Hibernate(ctx context.Context, sb Sandbox, dir string) error
	// Keep writes sb's image into dir as Hibernate does and leaves sb
	// running: a saved point to wake sandboxes from later.
	Keep(ctx context.Context, sb Sandbox, dir string) error
	// Wake starts a sandbox from the image in dir, which Hibernate wrote
	// of a sandbox of spec, and waits until its agent answers. It fails
	// with ErrSnapshotMissing when there is no image in dir. The image
	// stays, for more sandboxes to wake from it (a fork).
	Wake(ctx context.Context, dir string, spec Spec) (Sandbox, error)
}

// KernelAttacher is the ability of a woken sandbox to hand back the
// kernel that was open in it when it hibernated.
type KernelAttacher interface {
	// AttachKernel takes over the kernel, with its state, and returns it
	// with its execution count. A sandbox that has no kernel open fails
	// with ErrNotFound; one whose interpreter is gone, with another error.
	AttachKernel(ctx context.Context) (Kernel, int, error)
}

// Reseeder is the optional ability of a Kernel to draw fresh seeds for
// its interpreter's random generators, as a pooled clone does before its
// first request: every sandbox forked from one image must, or they would
// draw the same numbers. A kernel whose generator cannot be reseeded
// (Node's) fails with ErrCannotReseed.
type Reseeder interface {
	Reseed(ctx context.Context) error
}

// ErrCannotReseed means the kernel's interpreter cannot reseed its random
// generator, so that its state may not be cloned.
var ErrCannotReseed = errors.New("the interpreter's random generator cannot be reseeded")
