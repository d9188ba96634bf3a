package agent

import (
	"os"
	"slices"
	"syscall"
	"testing"

	"github.com/paddock-dev/paddock/runner/wire"
)

func TestHeapExhausted(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	abort := syscall.WaitStatus(syscall.SIGABRT)
	tests := []struct {
		name   string
		heapMB int
		ws     syscall.WaitStatus // exit code << 8, or the signal number
		peaks  rssPeaks
		want   bool
	}{
		{name: "abort after growing by the ceiling", heapMB: 100, ws: abort, peaks: rssPeaks{ready: 110 * mib, end: 210 * mib}, want: true},
		{name: "abort after growing by three quarters", heapMB: 100, ws: abort, peaks: rssPeaks{ready: 110 * mib, end: 185 * mib}, want: true},
		{name: "abort just short of three quarters", heapMB: 100, ws: abort, peaks: rssPeaks{ready: 110 * mib, end: 185*mib - 1}},
		{name: "abort with a small heap", heapMB: 100, ws: abort, peaks: rssPeaks{ready: 110 * mib, end: 112 * mib}},
		{name: "no ceiling", ws: abort, peaks: rssPeaks{ready: 0, end: 900 * mib}},
		{name: "ready unknown", heapMB: 100, ws: abort, peaks: rssPeaks{ready: -1, end: 900 * mib}},
		{name: "SIGKILL", heapMB: 100, ws: syscall.WaitStatus(syscall.SIGKILL), peaks: rssPeaks{end: 900 * mib}},
		{name: "SIGSEGV", heapMB: 100, ws: syscall.WaitStatus(syscall.SIGSEGV), peaks: rssPeaks{end: 900 * mib}},
		{name: "exit 134 is no signal", heapMB: 100, ws: 134 << 8, peaks: rssPeaks{end: 900 * mib}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := heapExhausted(tt.heapMB, tt.ws, tt.peaks); got != tt.want {
				t.Errorf("heapExhausted(%d, %v, %+v) = %v, want %v", tt.heapMB, tt.ws, tt.peaks, got, tt.want)
			}
		})
	}
}

func TestLostCellReason(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ lost, want string }{{"", "kernel_lost"}, {"oom", "oom"}, {"ok", "kernel_lost"}} {
		if got := lostCellReason(wire.Lost{Reason: tt.lost}); got != tt.want {
			t.Errorf("lostCellReason(%q) = %q, want %q", tt.lost, got, tt.want)
		}
	}
}

func TestResidentBytes(t *testing.T) {
	t.Parallel()
	if n := residentBytes(os.Getpid()); n <= 0 {
		t.Errorf("residentBytes(self) = %d, want a size", n)
	}
	if n := residentBytes(-5); n != -1 {
		t.Errorf("residentBytes(-5) = %d, want -1", n)
	}
}

func TestDriverArgvHeap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, language string
		heapMB         int
		want           []string // the arguments before the driver's code
	}{
		{name: "node with a ceiling", language: "node", heapMB: 313, want: []string{"/bin/node", "--max-old-space-size=313", "--expose-internals", "--v8-pool-size=1", "-e"}},
		{name: "node without", language: "node", want: []string{"/bin/node", "--expose-internals", "--v8-pool-size=1", "-e"}},
		{name: "python", language: "python", want: []string{"/bin/python3", "-c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			interp := "/bin/node"
			if tt.language == "python" {
				interp = "/bin/python3"
			}
			argv, err := driverArgv(tt.language, interp, "", tt.heapMB, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(argv) < len(tt.want) || !slices.Equal(argv[:len(tt.want)], tt.want) {
				t.Errorf("argv starts %q, want %q", argv[:min(len(argv), len(tt.want))], tt.want)
			}
		})
	}
}
