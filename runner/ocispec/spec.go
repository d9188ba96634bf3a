package ocispec

import (
	"encoding/base64"
	"strconv"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/paddock-dev/paddock/runner"
)

// HostPids is the host pids-cgroup cap for a whole sandbox. Under gVisor
// it bounds the Sentry's own threads too, so it stays generous; the
// user's processes are bounded by RLIMIT_NPROC instead.
const HostPids = 4096

// AgentCaps are all the agent keeps: enough to write the user's files,
// drop to the sandbox user and kill every user process. The user's
// processes run as UID and hold none of them.
var AgentCaps = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_KILL", "CAP_SETGID", "CAP_SETUID",
}

// Render is the OCI runtime spec of sandbox id of s: the agent as its
// process (as root, with AgentCaps, under the rlimits), the rootfs as its
// root, tmpfs /tmp and /dev/shm capped at the disk limit, the agent's
// host directory hostAgentDir mounted read-only at AgentDir, the cgroup
// limits under CgroupsPath(id) at the batch CPU weight (BatchShares; at
// IdleShares for a background start, s.Background), and
// namespaces of its own (an empty network namespace: no network). A
// runtime adjusts what its isolation needs on the result (the writable
// layer above a read-only root, for one).
func Render(id string, s runner.Spec, hostAgentDir string) *specs.Spec {
	l := WithDefaults(s.Limits)
	mem := l.MemoryBytes
	// Every filesystem the program can write is capped at the disk limit.
	disk := "size=" + strconv.FormatInt(l.DiskBytes, 10)
	pids := int64(HostPids)
	period := uint64(cpuPeriod)
	quota := int64(l.CPUs * float64(period))
	shares := BatchShares
	if s.Background {
		shares = IdleShares
	}
	annotations := map[string]string{}
	for k, v := range s.Labels {
		annotations[LabelPrefix+k] = v
	}
	return &specs.Spec{
		Version:  specs.Version,
		Hostname: "sandbox",
		Process: &specs.Process{
			User: specs.User{UID: 0, GID: 0},
			Args: AgentArgs(s),
			Env:  []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8"},
			Cwd:  "/",
			Capabilities: &specs.LinuxCapabilities{
				Bounding:  AgentCaps,
				Effective: AgentCaps,
				Permitted: AgentCaps,
			},
			Rlimits: []specs.POSIXRlimit{
				{Type: "RLIMIT_NPROC", Hard: uint64(l.Processes), Soft: uint64(l.Processes)},
				{Type: "RLIMIT_NOFILE", Hard: uint64(l.OpenFiles), Soft: uint64(l.OpenFiles)},
			},
			NoNewPrivileges: true,
		},
		Root: &specs.Root{Path: s.Rootfs, Readonly: false},
		Mounts: []specs.Mount{
			{Destination: "/proc", Type: "proc", Source: "proc"},
			{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
			{Destination: "/dev/pts", Type: "devpts", Source: "devpts", Options: []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}},
			// POSIX shared memory and semaphores (Python's multiprocessing)
			// live here; like /tmp it is a tmpfs of the run's disk size.
			{Destination: "/dev/shm", Type: "tmpfs", Source: "shm", Options: []string{"nosuid", "noexec", "nodev", "mode=1777", disk}},
			{Destination: "/sys", Type: "sysfs", Source: "sysfs", Options: []string{"nosuid", "noexec", "nodev", "ro"}},
			{Destination: "/tmp", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "nodev", "mode=1777", disk}},
			{Destination: AgentDir, Type: "bind", Source: hostAgentDir, Options: []string{"rbind", "ro", "nosuid", "nodev"}},
		},
		Annotations: annotations,
		Linux: &specs.Linux{
			CgroupsPath: CgroupsPath(id),
			Resources: &specs.LinuxResources{
				Memory: &specs.LinuxMemory{Limit: &mem, Swap: &mem},
				Pids:   &specs.LinuxPids{Limit: &pids},
				CPU:    &specs.LinuxCPU{Quota: &quota, Period: &period, Shares: &shares},
			},
			Namespaces: []specs.LinuxNamespace{
				{Type: specs.PIDNamespace}, {Type: specs.IPCNamespace}, {Type: specs.UTSNamespace},
				{Type: specs.MountNamespace}, {Type: specs.NetworkNamespace},
			},
		},
	}
}

// AgentArgs is the agent's command line in a sandbox of s: its language,
// the sandbox user, the working directory, Node's heap ceiling and the
// warm-up code.
func AgentArgs(s runner.Spec) []string {
	l := WithDefaults(s.Limits)
	args := []string{AgentPath,
		"--language=" + s.Language,
		"--uid=" + strconv.Itoa(UID),
		"--gid=" + strconv.Itoa(GID),
		"--workdir=" + WorkDir,
	}
	if s.Language == "node" {
		if mb := NodeHeapMB(l.MemoryBytes); mb > 0 {
			args = append(args, "--heap-mb="+strconv.FormatInt(mb, 10))
		}
	}
	if s.Warmup != "" {
		args = append(args, "--warmup-b64="+base64.StdEncoding.EncodeToString([]byte(s.Warmup)))
	}
	return args
}
