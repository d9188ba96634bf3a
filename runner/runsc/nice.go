package runsc

import (
	"os/exec"
	"runtime"
	"syscall"
)

// batchNice is the nice value of every runsc process Paddock execs: the
// CLI that creates, restores or deletes a sandbox and, inheriting it, the
// sandbox's own processes. Refills, restores and teardown are background
// work; at nice 10 the host scheduler weighs them about a tenth of the
// server's own threads (which serve live kernels) when the CPUs are
// contended, and the same as anything else when they are not. A sandbox's
// share among sandboxes is set by its cgroup's weight instead (see
// ocispec.BatchShares).
const batchNice = 10

// startNiced starts cmd at batchNice. Linux keeps a nice value per thread
// and a child inherits its forking thread's, so the fork happens on a
// thread of its own, niced first and never given back: it ends with the
// goroutine, leaving the server's other threads as they were.
func startNiced(cmd *exec.Cmd) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// Best effort: a refused nice starts the command as it is.
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, 0, batchNice)
		errc <- cmd.Start()
	}()
	return <-errc
}
