package runsc

import (
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/paddock-dev/paddock/runner"
)

// OCISpec is the OCI runtime spec Start and Restore write for sandbox id
// of s, with hostAgentDir as the agent's directory. It is exported for the
// benchmarks: their raw runsc baselines replace the process and keep the
// rest (limits, cgroup, mounts), so that the two cannot drift apart.
func OCISpec(id string, s runner.Spec, hostAgentDir string) *specs.Spec {
	return ociSpec(id, s, hostAgentDir)
}

// CreateFlags are the global runsc flags Start and Restore add for s: the
// network mode and the writable overlay with its size. Exported for the
// benchmarks, like OCISpec.
func CreateFlags(s runner.Spec) []string {
	return CreateOpts{OverlaySize: withDefaults(s.Limits).DiskBytes}.global()
}
