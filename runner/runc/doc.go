// Package runc is the second implementation of the runner contract: plain
// Linux containers made in-process with runc's libcontainer, from the same
// OCI spec, root filesystems and agent as the gVisor runtime.
//
// Isolation here is namespaces, cgroups, dropped capabilities and
// no_new_privs over the host's own kernel, not a second kernel: a kernel
// bug reachable from a container is reachable from user code. It is for
// trusted code (a team's own notebooks, CI jobs) where start-up speed
// matters more than that boundary; gVisor stays the default.
//
// Each sandbox is one container whose init is the agent, with the
// container's stdio as the frame channel. Its root is an overlay of the
// template's read-only root filesystem under a writable layer on a tmpfs
// capped at the disk limit; it gets fresh PID, mount, IPC, UTS, network
// (loopback only, down) and user namespaces, the user namespace mapping
// only root and the sandbox user onto themselves so that RLIMIT_NPROC is
// counted per sandbox rather than per host user.
//
// libcontainer starts a container by re-executing the current binary as
// "init": a binary that uses this package must call Init first thing in
// main (or TestMain) and be built with cgo (CGO_ENABLED=1, a C compiler),
// which the nsenter bootstrap needs. Without cgo, New fails saying so.
//
// runc imports runner, runner/agentconn (the host end of the agent
// protocol) and runner/ocispec (the spec both runtimes start from); it must
// not import pool, kernels, api or templates. Only cmd and benchmarks
// choose it.
package runc
