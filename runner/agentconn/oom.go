package agentconn

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// cgroupFS is where the host's cgroup hierarchies are mounted; tests
// point it elsewhere.
var cgroupFS = "/sys/fs/cgroup"

// CgroupOOMKills reads how many times the kernel OOM-killed inside the
// memory cgroup at cgroupsPath (an OCI spec's linux.cgroupsPath, v1 or
// v2 hierarchy): a Hooks.OOMKills for runtimes that place sandboxes in
// such a cgroup. It must be called before the container is deleted,
// which removes the cgroup. It returns 0 when the counter cannot be read.
func CgroupOOMKills(cgroupsPath string) int {
	rel := strings.TrimPrefix(cgroupsPath, "/")
	candidates := []struct{ file, key string }{
		{filepath.Join(cgroupFS, "memory", rel, "memory.oom_control"), "oom_kill"}, // v1
		{filepath.Join(cgroupFS, rel, "memory.events"), "oom_kill"},                // v2
	}
	for _, c := range candidates {
		if n, ok := readCounter(c.file, c.key); ok {
			return n
		}
	}
	return 0
}

// readCounter finds "key N" in a cgroup key/value file.
func readCounter(path, key string) (int, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if ok && k == key {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			return n, err == nil
		}
	}
	return 0, false
}
