//go:build linux && cgo

package runc

import (
	"fmt"
	"sync"

	"github.com/opencontainers/runc/libcontainer/configs"
	"github.com/opencontainers/runc/libcontainer/specconv"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/paddock-dev/paddock/runner/ocispec"
)

const (
	// agentTasks is what the pids cgroup allows beyond the user's process
	// limit: the agent's own threads. User processes are refused by
	// RLIMIT_NPROC first, which the agent can read (see runner/agent).
	agentTasks = 64
)

// maskedPaths hide host information a container's /proc and /sys would
// otherwise show (as Docker and runc's defaults do); readonlyPaths keep
// the kernel knobs there from being written.
var (
	maskedPaths = []string{
		"/proc/acpi", "/proc/asound", "/proc/interrupts", "/proc/kcore", "/proc/keys",
		"/proc/latency_stats", "/proc/sched_debug", "/proc/scsi", "/proc/timer_list",
		"/proc/timer_stats", "/sys/devices/virtual/powercap", "/sys/firmware",
	}
	readonlyPaths = []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}
)

// containerConfig turns the sandbox's OCI spec into libcontainer's
// configuration for container id, with root (the overlay) as its root
// filesystem. The spec is the one the gVisor runtime is given; what
// differs is what a second kernel made unnecessary there: a user
// namespace, masked paths and a pids cgroup sized to the processes.
func containerConfig(id string, spec *specs.Spec, root string, processes int) (*configs.Config, error) {
	s := *spec
	s.Root = &specs.Root{Path: root}
	lin := *spec.Linux
	lin.CgroupsPath = cgroupParent + "/" + id
	res := *lin.Resources
	pids := int64(processes + agentTasks)
	res.Pids = &specs.LinuxPids{Limit: &pids}
	lin.Resources = &res
	lin.Namespaces = append(append([]specs.LinuxNamespace(nil), lin.Namespaces...), specs.LinuxNamespace{Type: specs.UserNamespace})
	// Root and the sandbox user keep their own ids; nothing else is
	// mapped. In a user namespace of its own, a sandbox's tasks are
	// counted against RLIMIT_NPROC by themselves, not with every other
	// sandbox's tasks of the same host user.
	ids := []specs.LinuxIDMapping{{ContainerID: 0, HostID: 0, Size: 1}, {ContainerID: ocispec.UID, HostID: ocispec.UID, Size: 1}}
	gids := []specs.LinuxIDMapping{{ContainerID: 0, HostID: 0, Size: 1}, {ContainerID: ocispec.GID, HostID: ocispec.GID, Size: 1}}
	lin.UIDMappings, lin.GIDMappings = ids, gids
	lin.MaskedPaths, lin.ReadonlyPaths = maskedPaths, readonlyPaths
	s.Linux = &lin
	cfg, err := convert(id, &s)
	if err != nil {
		return nil, fmt.Errorf("converting the spec: %w", err)
	}
	for _, rl := range spec.Process.Rlimits {
		t, ok := rlimitTypes[rl.Type]
		if !ok {
			return nil, fmt.Errorf("unknown rlimit %q", rl.Type)
		}
		cfg.Rlimits = append(cfg.Rlimits, configs.Rlimit{Type: t, Hard: rl.Hard, Soft: rl.Soft})
	}
	return cfg, nil
}

// convertMu serialises convert: specconv hands every configuration
// pointers to its package's default devices and, for a container with a
// user namespace, writes their owners through them.
var convertMu sync.Mutex

// convert is specconv's conversion, with the configuration's devices and
// device rules copied out of specconv's shared defaults before anything
// else can read them.
func convert(id string, s *specs.Spec) (*configs.Config, error) {
	convertMu.Lock()
	defer convertMu.Unlock()
	cfg, err := specconv.CreateLibcontainerConfig(&specconv.CreateOpts{CgroupName: id, Spec: s, NoNewKeyring: true})
	if err != nil {
		return nil, err
	}
	for i, d := range cfg.Devices {
		c := *d
		cfg.Devices[i] = &c
	}
	if cfg.Cgroups != nil && cfg.Cgroups.Resources != nil {
		for i, r := range cfg.Cgroups.Resources.Devices {
			c := *r
			cfg.Cgroups.Resources.Devices[i] = &c
		}
	}
	return cfg, nil
}

var rlimitTypes = map[string]int{
	"RLIMIT_NPROC":  unix.RLIMIT_NPROC,
	"RLIMIT_NOFILE": unix.RLIMIT_NOFILE,
	"RLIMIT_CORE":   unix.RLIMIT_CORE,
	"RLIMIT_FSIZE":  unix.RLIMIT_FSIZE,
	"RLIMIT_STACK":  unix.RLIMIT_STACK,
	"RLIMIT_AS":     unix.RLIMIT_AS,
}
