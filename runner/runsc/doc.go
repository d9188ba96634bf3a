// Package runsc is the gVisor implementation of the runner contract.
//
// It drives the runsc binary with OCI bundles: one container per sandbox,
// created with the agent as its process and the container's stdio as the
// frame channel, which it hands to runner/agentconn to speak the protocol.
// runsc keeps what is gVisor's own: the CLI, launch, destroy, snapshots
// and orphans. The wrapper around the binary follows gVisor's own
// runsccmd: a struct with the binary path and global flags, one options
// struct per operation rendering its own flags, stderr attached to errors,
// argv logged at debug.
//
// runsc imports runner, runner/agentconn and runner/ocispec (the layout
// and spec both runtimes share); it must not import pool, kernels, api or
// templates. Only cmd and benchmarks choose it.
package runsc
