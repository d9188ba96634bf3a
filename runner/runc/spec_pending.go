package runc

// Until the runtime-neutral spec rendering lands (topic/remodel), a
// minimal stand-in so that the runtime can be tried. Removed at the merge.

import (
	"strconv"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/paddock-dev/paddock/runner"
)

func withDefaults(l runner.Limits) runner.Limits {
	if l.MemoryBytes <= 0 {
		l.MemoryBytes = 512 << 20
	}
	if l.Processes <= 0 {
		l.Processes = 64
	}
	if l.CPUs <= 0 {
		l.CPUs = 1
	}
	if l.DiskBytes <= 0 {
		l.DiskBytes = 256 << 20
	}
	if l.OpenFiles <= 0 {
		l.OpenFiles = 1024
	}
	return l
}

func ociSpec(id string, s runner.Spec, agentDir string) *specs.Spec {
	l := withDefaults(s.Limits)
	caps := []string{"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_KILL", "CAP_SETGID", "CAP_SETUID"}
	mem, pids := l.MemoryBytes, int64(4096)
	period := uint64(100000)
	quota := int64(l.CPUs * float64(period))
	size := "size=" + strconv.FormatInt(l.DiskBytes, 10)
	ann := map[string]string{}
	for k, v := range s.Labels {
		ann["dev.paddock."+k] = v
	}
	return &specs.Spec{
		Version: specs.Version, Hostname: "sandbox", Annotations: ann,
		Process: &specs.Process{
			Args:         []string{"/opt/paddock/paddock-agent", "--language=" + s.Language, "--uid=1000", "--gid=1000", "--workdir=/workspace"},
			Env:          []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8"},
			Cwd:          "/",
			Capabilities: &specs.LinuxCapabilities{Bounding: caps, Effective: caps, Permitted: caps},
			Rlimits: []specs.POSIXRlimit{
				{Type: "RLIMIT_NPROC", Hard: uint64(l.Processes), Soft: uint64(l.Processes)},
				{Type: "RLIMIT_NOFILE", Hard: uint64(l.OpenFiles), Soft: uint64(l.OpenFiles)},
			},
			NoNewPrivileges: true,
		},
		Root: &specs.Root{Path: s.Rootfs},
		Mounts: []specs.Mount{
			{Destination: "/proc", Type: "proc", Source: "proc"},
			{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
			{Destination: "/dev/pts", Type: "devpts", Source: "devpts", Options: []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}},
			{Destination: "/dev/shm", Type: "tmpfs", Source: "shm", Options: []string{"nosuid", "noexec", "nodev", "mode=1777", size}},
			{Destination: "/sys", Type: "sysfs", Source: "sysfs", Options: []string{"nosuid", "noexec", "nodev", "ro"}},
			{Destination: "/tmp", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "nodev", "mode=1777", size}},
			{Destination: "/opt/paddock", Type: "bind", Source: agentDir, Options: []string{"rbind", "ro", "nosuid", "nodev"}},
		},
		Linux: &specs.Linux{
			CgroupsPath: "/paddock/" + id,
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
