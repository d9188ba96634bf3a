package ocispec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/paddock-dev/paddock/runner"
)

// CPU weights of the sandboxes under one cgroup parent. Every sandbox
// starts at BatchShares, the kernel's default weight: a pooled one being
// restored or waiting, and a one-shot run. A sandbox that becomes an interactive kernel is raised to
// KernelShares (see Interactive), so that a live kernel's cell comes
// before refills and batch runs when the CPUs are contended. The weights
// only order siblings; each sandbox's quota still caps it.
const (
	BatchShares  uint64 = 1024
	KernelShares uint64 = 16384
)

// CgroupRoot is where the host's cgroup hierarchies are mounted.
const CgroupRoot = "/sys/fs/cgroup"

// CPUBurst is the CPU time a sandbox of l may bank while idle and spend
// above its quota later: one period's quota, the most the kernel allows.
// Over any span of seconds its share stays its quota (plus this once).
func CPUBurst(l runner.Limits) int64 {
	return int64(WithDefaults(l).CPUs * float64(cpuPeriod))
}

// cpuPeriod is the CFS period of every sandbox, in microseconds.
const cpuPeriod = 100000

// Interactive gives the sandbox whose host cgroup is path (a
// linux.cgroupsPath: CgroupsPath, or a runtime's own) the CPU treatment
// of a live kernel: KernelShares of weight, and a burst allowance of
// CPUBurst(l) on top of its quota, so that back-to-back cells that average
// under the quota are not throttled when one period's demand exceeds it.
// It writes the cgroup v1 cpu hierarchy under root, or the v2 unified one
// where that holds the cgroup.
func Interactive(root, path string, l runner.Limits) error {
	burst := CPUBurst(l)
	v1 := filepath.Join(root, "cpu", path)
	if _, err := os.Stat(v1); err == nil {
		return writeAll(v1, map[string]string{
			"cpu.shares":       strconv.FormatUint(KernelShares, 10),
			"cpu.cfs_burst_us": strconv.FormatInt(burst, 10),
		})
	}
	v2 := filepath.Join(root, path)
	if _, err := os.Stat(filepath.Join(v2, "cpu.max")); err == nil {
		return writeAll(v2, map[string]string{
			"cpu.weight":    strconv.FormatUint(sharesToWeight(KernelShares), 10),
			"cpu.max.burst": strconv.FormatInt(burst, 10),
		})
	}
	return fmt.Errorf("cpu cgroup of %s: %w", path, fs.ErrNotExist)
}

// sharesToWeight maps cgroup v1 cpu.shares [2, 262144] onto v2 cpu.weight
// [1, 10000], as the OCI runtimes do.
func sharesToWeight(shares uint64) uint64 {
	return 1 + ((shares-2)*9999)/262142
}

// writeAll writes each file in dir; a file the kernel lacks (an older
// kernel's burst) is skipped, any other failure is returned.
func writeAll(dir string, files map[string]string) error {
	var errs []error
	for name, v := range files {
		err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("writing %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}
