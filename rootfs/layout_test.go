package rootfs

import (
	"testing"

	"github.com/paddock-dev/paddock/runner/ocispec"
)

// The images are built for the sandbox layout the runtimes render
// (runner/ocispec); rootfs keeps its own copy so as not to import runner.
func TestLayoutIsTheRunnersLayout(t *testing.T) {
	if sandboxUID != ocispec.UID || sandboxGID != ocispec.GID {
		t.Errorf("sandbox user %d:%d, runner's %d:%d", sandboxUID, sandboxGID, ocispec.UID, ocispec.GID)
	}
	if "/"+sandboxHome != ocispec.WorkDir {
		t.Errorf("sandbox home /%s, runner's working directory %s", sandboxHome, ocispec.WorkDir)
	}
	if "/"+agentDir != ocispec.AgentDir {
		t.Errorf("agent directory /%s, runner's %s", agentDir, ocispec.AgentDir)
	}
	if "/"+nodeStartupDir != ocispec.NodeStartupDir {
		t.Errorf("node startup snapshots in /%s, runner's %s", nodeStartupDir, ocispec.NodeStartupDir)
	}
}
