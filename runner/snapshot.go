package runner

import (
	"context"
	"errors"
	"time"
)

// Snapshotter is an optional ability of a Runtime, found by type
// assertion: it saves the memory image of a freshly started sandbox once
// per spec, and starts later sandboxes by restoring that image instead of
// booting them. A restored sandbox is like a started one: its interpreter
// has run the spec's warm-up code and waits for a request.
//
// Restored clones share every byte of the image, random generators
// included. The in-sandbox drivers reseed what they can before each
// request; a spec whose interpreter keeps random state that cannot be
// reseeded (Node's) must not be snapshotted, and templates say which.
type Snapshotter interface {
	// Snapshot returns the image of spec, building it when it is not
	// cached. Concurrent calls for one spec build it once.
	Snapshot(ctx context.Context, spec Spec) (Snapshot, error)
	// Restore starts a sandbox from img. It fails with ErrSnapshotMissing
	// when the image is gone from disk.
	Restore(ctx context.Context, img Snapshot) (Sandbox, error)
	// Drop removes img from the cache, so that the next Snapshot of its
	// spec builds it again. For an image that failed to restore. An image
	// another process still restores from is left in place, and Drop
	// returns ErrSnapshotInUse: the next Snapshot finds it again.
	Drop(img Snapshot) error
}

// Snapshot is one saved sandbox image.
type Snapshot struct {
	// Key names the image's inputs: the spec, the root filesystem, the
	// runtime and agent versions. Any change gives another key.
	Key string
	// Path is the directory holding the image.
	Path string
	// Spec is the spec the image was taken of.
	Spec Spec
	// Built is true when this call built the image rather than found it.
	Built bool
	// BuildTime is how long building took; zero when found.
	BuildTime time.Duration
	// Bytes is the image's size on disk.
	Bytes int64
}

// ErrSnapshotMissing means a snapshot image is no longer on disk.
var ErrSnapshotMissing = errors.New("snapshot image missing")

// ErrSnapshotInUse means Drop left an image in place because another
// process sharing the snapshot directory still restores from it.
var ErrSnapshotInUse = errors.New("snapshot image still in use by another process")
