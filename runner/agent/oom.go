package agent

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"syscall"

	"github.com/paddock-dev/paddock/runner/wire"
)

// reasonOOM is the reason of a program that ran out of memory.
const reasonOOM = "oom"

// rssPeaks is an interpreter's resident memory, in bytes, as the kernel
// counted it: when it became ready, and its peak when it ended.
type rssPeaks struct {
	ready int64 // VmRSS from /proc/<pid>/status; -1 when it could not be read
	end   int64 // ru_maxrss from wait4
}

// heapExhausted reports whether an interpreter that ended with ws died of
// V8's heap ceiling of heapMB MiB. Node aborts (SIGABRT) when its heap is
// full, printing a message any program could print too; what the program
// cannot forge is the status and its memory, which the agent reads from
// the kernel. A full heap grew the interpreter's resident memory by 0.92
// to 1.27 times the ceiling in the cases measured under gVisor, so three
// quarters of it is the mark: a program that aborts itself reads killed
// unless it held as much memory, which is to say it was at its ceiling.
func heapExhausted(heapMB int, ws syscall.WaitStatus, p rssPeaks) bool {
	if heapMB <= 0 || !ws.Signaled() || ws.Signal() != syscall.SIGABRT || p.ready < 0 {
		return false
	}
	return p.end-p.ready >= int64(heapMB)<<20*3/4
}

// heapReason turns killed into oom when the run's interpreter died of its
// heap ceiling; any other reason stands.
func (s *session) heapReason(reason string) string {
	if reason == reasonKilled && s.interp.hasExited() && heapExhausted(s.agent.cfg.HeapMB, s.interp.status, s.interp.peaks) {
		return reasonOOM
	}
	return reason
}

// deathReason is oom when a kernel's interpreter died of its heap ceiling,
// and empty otherwise.
func (p *kproc) deathReason() string {
	if p.interp.hasExited() && heapExhausted(p.k.s.agent.cfg.HeapMB, p.interp.status, p.interp.peaks) {
		return reasonOOM
	}
	return ""
}

// lostCellReason is the reason of a cell whose kernel was lost as l says.
func lostCellReason(l wire.Lost) string {
	if l.Reason == reasonOOM {
		return reasonOOM
	}
	return reasonKernelLost
}

// residentBytes is the VmRSS of process pid, or -1.
func residentBytes(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmRSS:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return -1
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil || kb < 0 {
			return -1
		}
		return kb << 10
	}
	return -1
}
