package runc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// A sandbox's root filesystem is built on the host before its container
// starts, under the sandbox's bundle directory:
//
//	BUNDLE/layer   a tmpfs of the disk limit holding upper/ and work/
//	BUNDLE/root    an overlay: the template's image below, layer/upper above
//
// Writes land in the tmpfs, so the image stays untouched and the disk
// limit caps everything written outside /tmp and /dev/shm (which are
// their own capped tmpfs mounts). Both mounts are the host's: destroy and
// orphan cleanup unmount them (see unmountLayer).
const (
	layerDir = "layer"
	rootDir  = "root"
)

// mountLayer mounts the writable layer and the overlay root for image
// under bundle, capped at diskBytes, and returns the overlay's path.
func mountLayer(bundle, image string, diskBytes int64) (string, error) {
	layer := filepath.Join(bundle, layerDir)
	root := filepath.Join(bundle, rootDir)
	for _, d := range []string{layer, root} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return "", err
		}
	}
	opts := "mode=0755,size=" + strconv.FormatInt(diskBytes, 10)
	if err := unix.Mount("tmpfs", layer, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return "", fmt.Errorf("mounting the writable layer: %w", err)
	}
	upper, work := filepath.Join(layer, "upper"), filepath.Join(layer, "work")
	for _, d := range []string{upper, work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return "", errors.Join(err, unmountLayer(bundle))
		}
	}
	ov := "lowerdir=" + escapeOverlay(image) + ",upperdir=" + escapeOverlay(upper) + ",workdir=" + escapeOverlay(work)
	if err := unix.Mount("overlay", root, "overlay", unix.MS_NOSUID|unix.MS_NODEV, ov); err != nil {
		return "", errors.Join(fmt.Errorf("mounting the overlay root: %w", err), unmountLayer(bundle))
	}
	return root, nil
}

// unmountLayer undoes mountLayer, whatever part of it was done. It is
// safe on a bundle that has none of it.
func unmountLayer(bundle string) error {
	var errs []error
	for _, d := range []string{rootDir, layerDir} {
		if err := unmountAll(filepath.Join(bundle, d)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// unmountAll detaches every mount stacked on path.
func unmountAll(path string) error {
	for range 16 {
		err := unix.Unmount(path, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW)
		switch {
		case err == nil:
			continue
		case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOENT):
			return nil // not (or no longer) a mount point
		default:
			return fmt.Errorf("unmounting %s: %w", path, err)
		}
	}
	return fmt.Errorf("unmounting %s: still mounted after 16 unmounts", path)
}

// escapeOverlay escapes the characters overlayfs splits its options on.
func escapeOverlay(p string) string {
	return strings.NewReplacer(`\`, `\\`, `:`, `\:`, `,`, `\,`).Replace(p)
}
