package runsc

import (
	"fmt"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/ocispec"
)

// toBatch gives sandbox id, started or restored for spec and now up, the
// batch CPU weight when it was brought up at the idle one (a background
// start, see ocispec.IdleShares), so that whoever takes it runs at full
// weight. A sandbox it cannot raise is not handed out.
func toBatch(id string, spec runner.Spec) error {
	if !spec.Background {
		return nil
	}
	if err := ocispec.Batch(ocispec.CgroupRoot, ocispec.CgroupsPath(id)); err != nil {
		return fmt.Errorf("giving sandbox %s the batch CPU weight: %w", id, err)
	}
	return nil
}
