package agent

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// closeInheritedFDs marks every descriptor above stderr close-on-exec, so
// that nothing the agent inherited (its launcher's pipes, /dev/null…)
// reaches user code. The agent's own descriptors already are.
func closeInheritedFDs() error {
	dir, err := os.Open("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("listing descriptors: %w", err)
	}
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return fmt.Errorf("listing descriptors: %w", err)
	}
	for _, name := range names {
		if fd, err := strconv.Atoi(name); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
	return nil
}
