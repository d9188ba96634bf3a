package rootfs

import "errors"

var (
	// ErrNotBuilt is returned by Lookup when no complete image exists for
	// the template's key.
	ErrNotBuilt = errors.New("rootfs image not built")
	// ErrNoMmdebstrap means the mmdebstrap program is not installed.
	ErrNoMmdebstrap = errors.New("mmdebstrap not found (install it with: apt-get install -y mmdebstrap)")
	// ErrNoSource means no apt source serves the template's suite.
	ErrNoSource = errors.New("no apt source for suite")
)
