package host

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// userHZ is the clock tick of /proc/stat and /proc/<pid>/stat: USER_HZ,
// 100 on every Linux architecture Paddock builds for.
const userHZ = 100

// SandboxCPURoot is the parent of the sandboxes' CPU accounting cgroups:
// the cpuacct hierarchy's /paddock on cgroup v1, /paddock of the unified
// hierarchy on v2.
func SandboxCPURoot(sysfs string) string {
	if cg, err := DetectCgroups(sysfs); err == nil && cg.V2 {
		return cg.Root
	}
	return filepath.Join(sysfs, "cpuacct", "paddock")
}

// ReadCgroupCPU is a cgroup's CPU time in seconds: cpuacct.usage (ns) on
// v1, cpu.stat's usage_usec on v2.
func ReadCgroupCPU(dir string) (float64, error) {
	if b, err := os.ReadFile(filepath.Join(dir, "cpuacct.usage")); err == nil {
		ns, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		return float64(ns) / 1e9, err
	}
	f, err := os.Open(filepath.Join(dir, "cpu.stat"))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := ParseMemStat(f)
	if err != nil {
		return 0, err
	}
	us, ok := st["usage_usec"]
	if !ok {
		return 0, fmt.Errorf("%s/cpu.stat: no usage_usec", dir)
	}
	return float64(us) / 1e6, nil
}

// ParseProcStatBusy is the busy time of all CPUs in seconds from
// /proc/stat's "cpu" line: user, nice, system, irq, softirq and steal
// (guest time is already inside user and nice; idle and iowait are not
// busy).
func ParseProcStatBusy(r io.Reader) (float64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || f[0] != "cpu" {
			continue
		}
		if len(f) < 9 {
			return 0, fmt.Errorf("/proc/stat: short cpu line %q", sc.Text())
		}
		var busy uint64
		for _, i := range []int{1, 2, 3, 6, 7, 8} { // user nice system irq softirq steal
			v, err := strconv.ParseUint(f[i], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/stat: %w", err)
			}
			busy += v
		}
		return float64(busy) / userHZ, nil
	}
	return 0, fmt.Errorf("/proc/stat: no cpu line")
}

// ParsePidStatCPU is a process's utime + stime + cutime + cstime in
// seconds from its /proc/<pid>/stat line. The command name, in
// parentheses, may hold spaces: fields are counted after its last ')'.
func ParsePidStatCPU(line string) (float64, error) {
	i := strings.LastIndexByte(line, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/pid/stat: no command name")
	}
	// After ')': state (field 3) … utime is field 14, cstime field 17.
	f := strings.Fields(line[i+1:])
	if len(f) < 15 {
		return 0, fmt.Errorf("/proc/pid/stat: %d fields after the name", len(f))
	}
	var t uint64
	for _, s := range f[11:15] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/pid/stat: %w", err)
		}
		t += v
	}
	return float64(t) / userHZ, nil
}

// RusageSeconds is the user and system time of ru in seconds.
func RusageSeconds(ru syscall.Rusage) float64 {
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
