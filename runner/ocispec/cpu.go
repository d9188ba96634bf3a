package ocispec

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/paddock-dev/paddock/runner"
)

// CPU weights of the sandboxes under one cgroup parent. A sandbox that
// nobody waits for (a pool's refill, runner.Spec.Background) is started
// or restored at IdleShares, the least the kernel allows, so that it only
// gets the CPU that runs and live cells leave over; once it is up its
// runtime gives it BatchShares (see Batch), the kernel's default weight,
// before anyone can take it. A sandbox started for a caller who waits
// (a pool miss) has BatchShares throughout, and so does a one-shot run.
// A sandbox that becomes an interactive kernel is raised to KernelShares
// (see Interactive), so that a live kernel's cell comes before batch
// runs, which come before refills, when the CPUs are contended. The
// weights only order siblings; each sandbox's quota still caps it.
const (
	IdleShares   uint64 = 2
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
// of a live kernel: KernelShares of weight, a burst allowance of
// CPUBurst(l) on top of its quota, so that back-to-back cells that average
// under the quota are not throttled when one period's demand exceeds it,
// and its own CPUs (PinCPUs). It writes the cgroup v1 hierarchies under
// root, or the v2 unified one where that holds the cgroup.
func Interactive(root, path string, l runner.Limits) error {
	burst := CPUBurst(l)
	n := int(math.Ceil(WithDefaults(l).CPUs))
	v1 := filepath.Join(root, "cpu", path)
	if _, err := os.Stat(v1); err == nil {
		return errors.Join(writeAll(v1, map[string]string{
			"cpu.shares":       strconv.FormatUint(KernelShares, 10),
			"cpu.cfs_burst_us": strconv.FormatInt(burst, 10),
		}), pin(filepath.Join(root, "cpuset", path), "cpuset.effective_cpus", n))
	}
	v2 := filepath.Join(root, path)
	if _, err := os.Stat(filepath.Join(v2, "cpu.max")); err == nil {
		return errors.Join(writeAll(v2, map[string]string{
			"cpu.weight":    strconv.FormatUint(sharesToWeight(KernelShares), 10),
			"cpu.max.burst": strconv.FormatInt(burst, 10),
		}), pin(v2, "cpuset.cpus.effective", n))
	}
	return fmt.Errorf("cpu cgroup of %s: %w", path, fs.ErrNotExist)
}

// Batch gives the sandbox whose host cgroup is path the CPU weight of a
// one-shot run, BatchShares: a background sandbox, once up (see
// IdleShares). It writes the cgroup v1 cpu hierarchy under root, or the
// v2 unified one where that holds the cgroup.
func Batch(root, path string) error {
	v1 := filepath.Join(root, "cpu", path)
	if _, err := os.Stat(v1); err == nil {
		return writeAll(v1, map[string]string{"cpu.shares": strconv.FormatUint(BatchShares, 10)})
	}
	v2 := filepath.Join(root, path)
	if _, err := os.Stat(filepath.Join(v2, "cpu.max")); err == nil {
		return writeAll(v2, map[string]string{"cpu.weight": strconv.FormatUint(sharesToWeight(BatchShares), 10)})
	}
	return fmt.Errorf("cpu cgroup of %s: %w", path, fs.ErrNotExist)
}

// kernelsPinned counts the kernels pinned by this process; the next one
// takes the next CPUs round robin.
var kernelsPinned atomic.Uint64

// pin confines the cpuset cgroup dir to n of the CPUs its effective file
// allows (PinCPUs). A host without a cpuset cgroup there, or with no more
// than n CPUs, is left as it is.
func pin(dir, effective string, n int) error {
	allowed, err := os.ReadFile(filepath.Join(dir, effective))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the allowed CPUs: %w", err)
	}
	cpus, err := PinCPUs(strings.TrimSpace(string(allowed)), n, kernelsPinned.Add(1)-1)
	if err != nil || cpus == "" {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "cpuset.cpus"), []byte(cpus), 0); err != nil {
		return fmt.Errorf("pinning to CPUs %s: %w", cpus, err)
	}
	return nil
}

// PinCPUs picks the CPUs of the seq-th kernel (from 0): n of allowed (a
// cpuset list such as "0-3" or "0,2-5"), taken round robin from the
// highest CPU down, since the lowest tends to take the most interrupts. A
// kernel's threads hand each cell from one to another a dozen times;
// kept on the CPUs its quota allows anyway, each hand-off finds its
// thread's cache warm and no halted CPU to wake, where spread over the
// machine they wait for both (docs/kernel-round-trip.md). It returns ""
// when allowed has no more than n CPUs: there is nothing to narrow.
func PinCPUs(allowed string, n int, seq uint64) (string, error) {
	cpus, err := parseCPUList(allowed)
	if err != nil {
		return "", err
	}
	n = max(n, 1)
	if len(cpus) <= n {
		return "", nil
	}
	first := int(seq % uint64(len(cpus)))
	pick := make([]int, 0, n)
	for i := range n {
		pick = append(pick, cpus[len(cpus)-1-(first+i)%len(cpus)])
	}
	slices.Sort(pick)
	parts := make([]string, len(pick))
	for i, c := range pick {
		parts[i] = strconv.Itoa(c)
	}
	return strings.Join(parts, ","), nil
}

// parseCPUList reads a cpuset list ("0-3,8,10-11") into its CPUs, in order.
func parseCPUList(s string) ([]int, error) {
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("cpu list %q: bad %q", s, part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("cpu list %q: bad %q", s, part)
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	if len(cpus) == 0 {
		return nil, fmt.Errorf("cpu list %q is empty", s)
	}
	slices.Sort(cpus)
	return slices.Compact(cpus), nil
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
