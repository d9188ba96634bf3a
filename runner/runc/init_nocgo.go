//go:build !linux || !cgo

package runc

import (
	"context"
	"os"

	"github.com/paddock-dev/paddock/runner"
)

// haveBootstrap says the nsenter bootstrap is linked in: not without cgo.
const haveBootstrap = false

// Init does nothing in a binary built without cgo: no container can be
// started from it.
func Init() {}

// Without cgo there is no libcontainer: New fails with ErrNoBootstrap, so
// none of these is ever reached; they keep the package building.

type container struct{ toAgent, fromAgent, agentLog *os.File }

func (*container) destroy(context.Context) error { return ErrNoBootstrap }

func (*Runtime) launch(string, runner.Spec) (*container, error) { return nil, ErrNoBootstrap }

// Cleanup fails: without cgo this binary cannot have made containers.
func (*Runtime) Cleanup(context.Context) (int, error) { return 0, ErrNoBootstrap }

// ReapOthers fails as Cleanup does.
func (*Runtime) ReapOthers(context.Context, string, string) (int, error) { return 0, ErrNoBootstrap }

// Close releases nothing.
func (*Runtime) Close() error { return nil }
