package runsc

import (
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
)

// nullNetNS is the file under runsc's root where runsc pins the empty
// network namespace its gofers share (`--network=none`), a bind mount.
const nullNetNS = "null-netns"

// closeNetNS unmounts runsc's pinned null network namespace under the
// root, which otherwise stays mounted after the server exits and keeps the
// state directory from being removed (EBUSY). Close calls it; a later
// Start pins the namespace again.
func (rt *Runtime) closeNetNS() error {
	path := filepath.Join(rt.runsc.Root, nullNetNS)
	// Concurrent creates may have stacked several mounts on the path.
	for range 64 {
		err := syscall.Unmount(path, syscall.MNT_DETACH)
		switch {
		case err == nil:
			continue
		case errors.Is(err, syscall.EINVAL), errors.Is(err, syscall.ENOENT):
			return nil // not (or no longer) a mount point
		default:
			return fmt.Errorf("unmounting %s: %w", path, err)
		}
	}
	return fmt.Errorf("unmounting %s: still mounted after 64 unmounts", path)
}
