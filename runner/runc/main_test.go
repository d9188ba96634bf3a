package runc_test

import (
	"os"
	"testing"

	"github.com/paddock-dev/paddock/runner/runc"
)

// TestMain lets the test binary be libcontainer's init: the containers
// the tests start re-execute it.
func TestMain(m *testing.M) {
	runc.Init()
	os.Exit(m.Run())
}
