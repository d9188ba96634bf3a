//go:build ignore

// This file is not part of Paddock's build. deploy/runsc/build.sh copies
// it, without the build line above, into gVisor's EROFS filesystem
// package (pkg/sentry/fsimpl/erofs), which has no save hooks of its own.
//
// An EROFS filesystem keeps up to 1,000 dentries that nothing uses any
// more in a cache, so that a path looked up again is found at once. A
// checkpoint saves that cache with the kernel, and every restore decodes
// it again: after the pandas-ready template's imports it is most of the
// saved kernel's objects (30,000 of 57,000, counted from runsc's "Kernel
// load stats"), and every clone pays for them on its restore. Before a
// save, the filesystem now empties the cache; what a restored program
// looks up again is read from the image, as after any cache eviction.
// Dentries still in use (open or mapped files, working directories) are
// not in the cache and are saved as before.

package erofs

import (
	"gvisor.dev/gvisor/pkg/context"
	"gvisor.dev/gvisor/pkg/sentry/vfs"
)

// PrepareSave implements vfs.FilesystemImplSaveRestoreExtension.PrepareSave.
// The kernel is paused here, so no lookup races the eviction.
func (fs *filesystem) PrepareSave(ctx context.Context) error {
	fs.evictAllCachedDentries(ctx)
	return nil
}

// BeforeResume implements vfs.FilesystemImplSaveRestoreExtension.BeforeResume.
func (fs *filesystem) BeforeResume(context.Context) {}

// CompleteRestore implements
// vfs.FilesystemImplSaveRestoreExtension.CompleteRestore.
func (fs *filesystem) CompleteRestore(context.Context, vfs.CompleteRestoreOptions) error {
	return nil
}
