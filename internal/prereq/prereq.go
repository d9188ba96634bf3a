// Package prereq is how a test says what it needs from the host. Without
// it the test skips, so `go test ./...` works on any machine; under
// `make test`, which sets PADDOCK_REQUIRE_GVISOR=1, nothing may skip
// silently and the test fails instead, saying what to install or change.
package prereq

import (
	"os"
	"os/exec"
	"testing"
)

// Required reports whether a missing prerequisite fails the test rather
// than skipping it.
func Required() bool {
	return os.Getenv("PADDOCK_REQUIRE_GVISOR") == "1"
}

// Missing ends the test for a prerequisite the host lacks: what is the
// need, fix how to meet it.
func Missing(t testing.TB, what, fix string) {
	t.Helper()
	if Required() {
		t.Fatalf("missing prerequisite: %s; %s (under make test nothing skips)", what, fix)
	}
	t.Skipf("skipped: %s; %s", what, fix)
}

// Root ends the test unless it runs as root.
func Root(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		Missing(t, "root "+why, "run the tests as root (make test does, as it installs packages)")
	}
}

// Command returns the path of a host command, or ends the test saying
// which Debian package provides it.
func Command(t testing.TB, name, debianPackage string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		Missing(t, name+" not found", "apt-get install "+debianPackage+" (make test-deps does)")
	}
	return path
}
