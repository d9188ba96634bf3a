package runsc_test

import (
	"io"
	"os"
	"testing"
)

// standInEnv makes the test binary stand in for a runsc command (see
// TestGVisorCleanupReapsUnlistedSandboxes): it ignores its arguments and
// waits until its stdin closes, one process that starts no other, whatever
// the host's interpreters are.
const standInEnv = "PADDOCK_TEST_STAND_IN"

func TestMain(m *testing.M) {
	if os.Getenv(standInEnv) == "1" {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	os.Exit(m.Run())
}
