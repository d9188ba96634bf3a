package host

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// The host processes of a gVisor sandbox split its anonymous memory: the
// Sentry (runsc-sandbox) holds the guest kernel's own Go heap, the gofer
// (runsc-gofer) its Go heap; the guest's memory, the interpreter's pages
// included, is the shared memory file (memSample.Shmem).

// RunscAnon sums the anonymous memory (smaps_rollup's Anonymous) of the
// Sentry and of the gofer among the processes listed in a cgroup's
// cgroup.procs file, reading them under procRoot (/proc). A process that
// has ended meanwhile is skipped.
func RunscAnon(procsFile, procRoot string) (sentry, gofer uint64, err error) {
	b, err := os.ReadFile(procsFile)
	if err != nil {
		return 0, 0, err
	}
	for _, pid := range strings.Fields(string(b)) {
		cmd, err := os.ReadFile(filepath.Join(procRoot, pid, "cmdline"))
		if err != nil {
			continue
		}
		name, _, _ := bytes.Cut(cmd, []byte{0})
		var sum *uint64
		switch string(name) {
		case "runsc-sandbox":
			sum = &sentry
		case "runsc-gofer":
			sum = &gofer
		default:
			continue
		}
		f, err := os.Open(filepath.Join(procRoot, pid, "smaps_rollup"))
		if err != nil {
			continue
		}
		st, err := ParseProcStatus(f)
		f.Close()
		if err != nil {
			return 0, 0, err
		}
		*sum += st["Anonymous"]
	}
	return sentry, gofer, nil
}
