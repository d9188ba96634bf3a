//go:build linux && cgo

package runc

import (
	"fmt"
	"sync"
	"testing"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/ocispec"
)

// Pools start sandboxes concurrently: converting their specs at once must
// not race (specconv writes through pointers it shares between
// configurations; -race catches it), and no two configurations may share
// a device.
func TestContainerConfigConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	devs := make([][]string, 8)
	for i := range devs {
		wg.Go(func() {
			spec := ocispec.Render("pd-0000000000000000", runner.Spec{Language: "python", Rootfs: "/nonexistent"}, "/nonexistent")
			cfg, err := containerConfig("pd-0000000000000000", spec, "/nonexistent", 32)
			if err != nil {
				t.Error(err)
				return
			}
			for _, d := range cfg.Devices {
				devs[i] = append(devs[i], fmt.Sprintf("%p", d))
			}
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, ds := range devs {
		for _, d := range ds {
			if seen[d] {
				t.Fatal("two configurations share a device")
			}
			seen[d] = true
		}
	}
}
