package agent

import (
	_ "embed"
	"fmt"
	"strconv"
)

// readyMarker is written by a driver on its stdout and its stderr once the
// warm-up is over and it waits for the request. Everything before it is
// warm-up output and is not part of the run. It appears verbatim in
// driver.py and driver.js.
const readyMarker = "\x00paddock:ready\x00"

var (
	//go:embed driver.py
	pythonDriver string
	//go:embed driver.js
	nodeDriver string
	//go:embed kernel.py
	pythonKernel string
	//go:embed kernel_display.py
	pythonDisplay string
	//go:embed kernel_introspect.py
	pythonIntrospect string
	//go:embed kernel.js
	nodeKernel string
	//go:embed kernel_introspect.js
	nodeIntrospect string
)

// driverArgv is the interpreter's command line: the driver as inline code,
// the warm-up code as its only argument. Node's internals are exposed for
// the kernel's top-level await (node's own REPL transform), and its heap is
// capped at heapMB MiB when that is set. V8 gets one worker thread for its
// background jobs instead of four: a sandbox has one CPU's quota, and each
// thread is made at start and torn down at exit, which under gVisor costs
// CPU every sandbox pays. With blob, node starts from that
// startup snapshot, whose main function runs the driver given as its first
// argument (templates/node_startup.js) as -e would.
func driverArgv(language, interpreter, warmup string, heapMB int, blob string) ([]string, error) {
	switch language {
	case LanguagePython:
		return []string{interpreter, "-c", pythonDriver, warmup}, nil
	case LanguageNode:
		argv := []string{interpreter}
		if heapMB > 0 {
			argv = append(argv, "--max-old-space-size="+strconv.Itoa(heapMB))
		}
		argv = append(argv, "--expose-internals", "--v8-pool-size=1")
		if blob != "" {
			return append(argv, "--snapshot-blob", blob, "--", nodeDriver, warmup), nil
		}
		return append(argv, "-e", nodeDriver, "--", warmup), nil
	}
	return nil, fmt.Errorf("no driver for language %q", language)
}

// kernelSource is the code a driver runs to become a kernel.
func kernelSource(language string) string {
	if language == LanguageNode {
		return nodeKernel
	}
	return pythonKernelSource
}

// kernelIntrospect is the code a Node kernel evaluates to answer
// questions about code (complete, inspect, is_complete); Python's is part
// of its kernel source.
func kernelIntrospect(language string) string {
	if language == LanguageNode {
		return nodeIntrospect
	}
	return ""
}

// pythonKernelSource is the Python kernel in one piece.
var pythonKernelSource = pythonKernel + "\n" + pythonDisplay + "\n" + pythonIntrospect

// interpreterEnv is the whole environment of user processes: no variable
// of the agent's or the host's leaks in.
func interpreterEnv(workdir string) []string {
	return []string{
		"PATH=" + SearchPath,
		"HOME=" + workdir,
		"LANG=C.UTF-8",
		"PYTHONDONTWRITEBYTECODE=1",
		"MPLBACKEND=Agg",
	}
}
