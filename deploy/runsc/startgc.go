//go:build ignore

// This file is not part of Paddock's build. deploy/runsc/build.sh copies
// it, without the build line above, into gVisor's runsc/boot package and
// calls its two functions from the sandbox's boot path.
//
// A sandbox's Sentry is a Go program whose heap starts small, so while it
// boots or restores (decoding the kernel's saved objects, most of them
// garbage within milliseconds) the collector runs cycle after cycle: about
// 10–30 ms of CPU per start on a 2-vCPU VM, measured with perf. Until the
// kernel starts, the Sentry collects less often; once it starts, it goes
// back to the usual pace and returns what the start left behind to the
// host, so an idle sandbox holds less memory than without this.

package boot

import (
	"runtime"
	rdebug "runtime/debug"

	"gvisor.dev/gvisor/pkg/log"
)

// paddockStartGCPercent is GOGC while the sandbox boots or restores.
const paddockStartGCPercent = 400

var paddockGCPercent = 100

// PaddockStartupGC slows the collector down for the start. The boot
// command calls it first thing.
func PaddockStartupGC() {
	paddockGCPercent = rdebug.SetGCPercent(paddockStartGCPercent)
	log.Infof("paddock: Sentry GC percent %d until the kernel starts (was %d)", paddockStartGCPercent, paddockGCPercent)
}

// paddockStartedGC puts the collector back once the kernel has started
// (after a boot and after a restore alike) and returns the start's
// garbage to the host. It runs beside the application, off the path
// that starts it.
func paddockStartedGC() {
	go func() {
		rdebug.SetGCPercent(paddockGCPercent)
		rdebug.FreeOSMemory()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		log.Infof("paddock: Sentry GC percent %d again after the start; heap in use %d KiB, %d KiB returned to the host",
			paddockGCPercent, m.HeapInuse>>10, m.HeapReleased>>10)
	}()
}
