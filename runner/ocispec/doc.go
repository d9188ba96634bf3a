// Package ocispec is the one home of a sandbox's shape, for every runtime:
// the layout inside it (the agent's path, the working directory, the
// sandbox user, the cgroup parent), the default limits, the OCI runtime
// spec (Render) a runtime starts the agent from, and the host side of that
// layout every runtime shares (NewID, InstallAgent).
//
// ocispec imports runner and the OCI runtime-spec types only; it knows
// nothing of any runtime's command line or state.
package ocispec
