//go:build !linux

package runsc

import (
	"fmt"

	"github.com/paddock-dev/paddock/runner"
)

// closeNetNS does nothing where runsc does not run.
func (rt *Runtime) closeNetNS() error { return nil }

// nets stands for the sandbox networks, which need Linux.
type nets struct{}

type sandboxNet struct{}

func (*sandboxNet) path() string { return "" }

func networkMode(runner.Spec) string { return "none" }

func (rt *Runtime) newNet(string) (*sandboxNet, error) {
	return nil, fmt.Errorf("sandbox networks: %w", runner.ErrNotSupported)
}
func (rt *Runtime) dropNet(string) error                   { return nil }
func (rt *Runtime) closeNets() error                       { return nil }
func (rt *Runtime) egressOf(string) runner.EgressListeners { return runner.EgressListeners{} }

func (rt *Runtime) reapNets() (int, error) { return 0, nil }
