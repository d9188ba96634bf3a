package runsc

import (
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/ocispec"
)

// CreateFlags are the global runsc flags Start and Restore add for s: the
// network mode and the writable overlay with its size. It is exported for
// the benchmarks: their raw runsc baselines start containers of
// ocispec.Render's spec with these flags, so that the two cannot drift
// apart.
func CreateFlags(s runner.Spec) []string {
	return CreateOpts{OverlaySize: ocispec.WithDefaults(s.Limits).DiskBytes}.global()
}
