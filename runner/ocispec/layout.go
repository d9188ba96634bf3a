package ocispec

// The sandbox's layout: where the agent, the user and the user's files
// are inside every sandbox, whatever the runtime. The template root
// filesystems are built to match it (rootfs binds its own copy to these
// in a test), and the agent's flags default to it.
const (
	// AgentDir is where the host directory holding the agent binary is
	// mounted, read-only.
	AgentDir = "/opt/paddock"
	// AgentName is the agent binary's name in that directory.
	AgentName = "paddock-agent"
	// AgentPath is the agent inside the sandbox: its init process.
	AgentPath = AgentDir + "/" + AgentName
	// NodeStartupDir holds the startup snapshots a node image carries
	// (node --snapshot-blob), built with the image's own node.
	NodeStartupDir = "/usr/lib/paddock"
	// WorkDir is the user's working directory and home.
	WorkDir = "/workspace"
	// UID and GID are the sandbox user the agent runs code as.
	UID = 1000
	GID = 1000
	// CgroupParent groups every Paddock sandbox under one host cgroup.
	CgroupParent = "/paddock"
	// LabelPrefix turns a Spec label into an OCI annotation.
	LabelPrefix = "dev.paddock."
)

// CgroupsPath is the host cgroup of sandbox id (the spec's
// linux.cgroupsPath).
func CgroupsPath(id string) string { return CgroupParent + "/" + id }
