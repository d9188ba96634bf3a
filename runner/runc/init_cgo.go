//go:build linux && cgo

package runc

import (
	"os"
	"runtime"

	"github.com/opencontainers/runc/libcontainer"
	// The nsenter bootstrap runs as a C constructor before the Go runtime
	// starts: it joins and creates the container's namespaces in the
	// re-executed init, which a multi-threaded Go process cannot do.
	_ "github.com/opencontainers/runc/libcontainer/nsenter"
)

// init keeps the main goroutine on the main thread, so that no other
// goroutine runs there. Every container start has libcontainer lock a
// goroutine to its thread, join the container's mount namespace and exit
// without unlocking; Go ends such a thread, but it cannot end the main
// one, which it parks for good instead. Parked in a container's mount
// namespace, the main thread would pin that namespace (and the writable
// layer mounted in it) for the life of the process, and /proc/self would
// show that namespace rather than the host's.
func init() { runtime.LockOSThread() }

// haveBootstrap says the nsenter bootstrap is linked in.
const haveBootstrap = true

// Init becomes the init of a container being started when this process
// is libcontainer's re-execution of the binary ("BINARY init", with the
// bootstrap's pipe in its environment) and then never returns. Anywhere
// else it returns at once. Call it first in main and in TestMain.
func Init() {
	if len(os.Args) > 1 && os.Args[1] == "init" && os.Getenv("_LIBCONTAINER_SYNCPIPE") != "" {
		libcontainer.Init()
	}
}
