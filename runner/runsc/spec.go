package runsc

import (
	"encoding/base64"
	"strconv"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/paddock-dev/paddock/runner"
)

// In-sandbox layout shared with the agent and the template root filesystems.
const (
	agentDir   = "/opt/paddock"
	agentPath  = agentDir + "/paddock-agent"
	workDir    = "/workspace"
	sandboxUID = 1000
	sandboxGID = 1000
	// cgroupParent groups every Paddock sandbox under one host cgroup.
	cgroupParent = "/paddock"
	// labelPrefix turns a Spec label into an OCI annotation.
	labelPrefix = "dev.paddock."
	// hostPids is the host pids-cgroup cap for a whole sandbox. It bounds
	// the Sentry's own threads, so it stays generous; guest processes are
	// bounded by RLIMIT_NPROC instead.
	hostPids = 4096
)

// Defaults applied where a Spec leaves a limit at zero.
var defaultLimits = runner.Limits{
	MemoryBytes: 512 << 20,
	Processes:   64,
	CPUs:        1,
	DiskBytes:   256 << 20,
	OpenFiles:   1024,
}

func withDefaults(l runner.Limits) runner.Limits {
	if l.MemoryBytes <= 0 {
		l.MemoryBytes = defaultLimits.MemoryBytes
	}
	if l.Processes <= 0 {
		l.Processes = defaultLimits.Processes
	}
	if l.CPUs <= 0 {
		l.CPUs = defaultLimits.CPUs
	}
	if l.DiskBytes <= 0 {
		l.DiskBytes = defaultLimits.DiskBytes
	}
	if l.OpenFiles <= 0 {
		l.OpenFiles = defaultLimits.OpenFiles
	}
	return l
}

// agentCaps are all the agent keeps: enough to write the user's files,
// drop to the sandbox user and kill every user process. The user's
// processes run as uid 1000 and hold none of them.
var agentCaps = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_KILL", "CAP_SETGID", "CAP_SETUID",
}

// ociSpec renders the OCI runtime spec of one sandbox. hostAgentDir is the
// host directory holding the agent binary, mounted read-only.
func ociSpec(id string, s runner.Spec, hostAgentDir string) *specs.Spec {
	l := withDefaults(s.Limits)
	args := []string{agentPath,
		"--language=" + s.Language,
		"--uid=" + strconv.Itoa(sandboxUID),
		"--gid=" + strconv.Itoa(sandboxGID),
		"--workdir=" + workDir,
	}
	if s.Language == "node" {
		if mb := nodeHeapMB(l.MemoryBytes); mb > 0 {
			args = append(args, "--heap-mb="+strconv.FormatInt(mb, 10))
		}
	}
	if s.Warmup != "" {
		args = append(args, "--warmup-b64="+base64.StdEncoding.EncodeToString([]byte(s.Warmup)))
	}
	mem := l.MemoryBytes
	// Every filesystem the program can write is capped at the disk limit.
	disk := "size=" + strconv.FormatInt(l.DiskBytes, 10)
	pids := int64(hostPids)
	period := uint64(100000)
	quota := int64(l.CPUs * float64(period))
	annotations := map[string]string{}
	for k, v := range s.Labels {
		annotations[labelPrefix+k] = v
	}
	return &specs.Spec{
		Version:  specs.Version,
		Hostname: "sandbox",
		Process: &specs.Process{
			User: specs.User{UID: 0, GID: 0},
			Args: args,
			Env:  []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8"},
			Cwd:  "/",
			Capabilities: &specs.LinuxCapabilities{
				Bounding:  agentCaps,
				Effective: agentCaps,
				Permitted: agentCaps,
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
			{Destination: agentDir, Type: "bind", Source: hostAgentDir, Options: []string{"rbind", "ro", "nosuid", "nodev"}},
		},
		Annotations: annotations,
		Linux: &specs.Linux{
			CgroupsPath: cgroupParent + "/" + id,
			Resources: &specs.LinuxResources{
				Memory: &specs.LinuxMemory{Limit: &mem, Swap: &mem},
				Pids:   &specs.LinuxPids{Limit: &pids},
				CPU:    &specs.LinuxCPU{Quota: &quota, Period: &period},
			},
			Namespaces: []specs.LinuxNamespace{
				{Type: specs.PIDNamespace}, {Type: specs.IPCNamespace}, {Type: specs.UTSNamespace},
				{Type: specs.MountNamespace}, {Type: specs.NetworkNamespace},
			},
		},
	}
}
