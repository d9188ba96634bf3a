package rootfs

import "errors"

var (
	// ErrNotBuilt is returned by Lookup when no complete image exists for
	// the template's key.
	ErrNotBuilt = errors.New("rootfs image not built")
	// ErrNoMmdebstrap means the mmdebstrap program is not installed.
	ErrNoMmdebstrap = errors.New("mmdebstrap not found (install it with: apt-get install -y mmdebstrap)")
	// ErrNoMirror means no mirror was given and the host's apt sources
	// have no Debian mirror to build from (an Ubuntu host, say).
	ErrNoMirror = errors.New("no Debian mirror in the host's apt sources")
)
