package runsc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"time"

	"github.com/paddock-dev/paddock/runner/ocispec"
)

// A server killed while a `runsc run` or `runsc restore` was under way
// leaves processes runsc may not list: the command itself, and the sandbox
// and gofer it had started before it saved the container's state. Every
// one of them names the runtime's root on its command line (the wrapper
// passes --root=ROOT to runsc, and runsc hands it on to the processes it
// starts), so Cleanup also looks for them in /proc.

// stray is a host process of a runsc command or sandbox under a root.
type stray struct {
	pid int
	id  string // the container it belongs to, when its command line names one
}

// sandboxID matches the IDs ocispec.NewID makes.
var sandboxID = regexp.MustCompile(`^pd-[0-9a-f]{16}$`)

// findStrays lists the processes under proc whose command line has the
// argument --root=root, except the caller's own.
func findStrays(proc, root string) []stray {
	ents, err := os.ReadDir(proc)
	if err != nil {
		return nil
	}
	rootArg := []byte("--root=" + root)
	self := os.Getpid()
	var out []stray
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(proc, e.Name(), "cmdline"))
		if err != nil {
			continue // gone, or a kernel thread
		}
		args := bytes.Split(bytes.TrimRight(raw, "\x00"), []byte{0})
		named := false
		for _, a := range args {
			if bytes.Equal(a, rootArg) {
				named = true
				break
			}
		}
		if named {
			out = append(out, stray{pid: pid, id: containerOf(args)})
		}
	}
	return out
}

// containerOf is the container a runsc command line is about: the base of
// its bundle (--bundle=DIR or --bundle DIR), else its last argument when
// that is a sandbox ID, else "".
func containerOf(args [][]byte) string {
	for i, a := range args {
		if dir, ok := bytes.CutPrefix(a, []byte("--bundle=")); ok {
			return idOrEmpty(filepath.Base(string(dir)))
		}
		if bytes.Equal(a, []byte("--bundle")) && i+1 < len(args) {
			return idOrEmpty(filepath.Base(string(args[i+1])))
		}
	}
	if len(args) > 0 {
		return idOrEmpty(string(args[len(args)-1]))
	}
	return ""
}

func idOrEmpty(s string) string {
	if sandboxID.MatchString(s) {
		return s
	}
	return ""
}

// strayGrace bounds the wait for killed strays to disappear.
const strayGrace = 30 * time.Second

// reapStrays kills every process naming the runtime's root, waits for them
// to go, and removes what the containers they named left behind: runsc
// state, cgroups and bundles. It returns the containers it found.
func (rt *Runtime) reapStrays(ctx context.Context) (map[string]bool, error) {
	strays := findStrays("/proc", rt.runsc.Root)
	ids := map[string]bool{}
	for _, s := range strays {
		// ESRCH: it ended on its own meanwhile.
		_ = syscall.Kill(s.pid, syscall.SIGKILL)
		if s.id != "" {
			ids[s.id] = true
		}
	}
	var errs []error
	deadline := time.Now().Add(strayGrace)
	for _, s := range strays {
		for alive(s.pid) {
			if time.Now().After(deadline) {
				errs = append(errs, fmt.Errorf("process %d (container %q) outlived SIGKILL", s.pid, s.id))
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	for id := range ids {
		// The state may or may not have been saved: a failure here only
		// means there was none.
		_ = rt.destroyContainer(ctx, id)
		errs = append(errs, removeCgroups(id))
	}
	return ids, errors.Join(errs...)
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses and may
	// itself contain them.
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
		return b[i+2] != 'Z' && b[i+2] != 'X'
	}
	return true
}

// removeCgroups removes container id's host cgroups (cgroup v1 hierarchies
// and the v2 unified one; see ocispec.CgroupsPath). Its processes are killed by
// then, but a killed process can stay in a cgroup for a moment as it
// exits, and helpers of the sandbox that name no runsc root (systrap's
// stubs) die only after their parent: while a cgroup is busy, whatever is
// still in it is killed, and the removal tried again until strayGrace.
func removeCgroups(id string) error {
	deadline := time.Now().Add(strayGrace)
	var errs []error
	for _, dir := range cgroupDirs(ocispec.CgroupRoot, ocispec.CgroupsPath(id)) {
		for {
			err := os.Remove(dir)
			if err == nil || errors.Is(err, os.ErrNotExist) {
				break
			}
			if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
				errs = append(errs, fmt.Errorf("removing cgroup %s: %w", dir, err))
				break
			}
			killMembers(dir)
			time.Sleep(10 * time.Millisecond)
		}
	}
	return errors.Join(errs...)
}

// killMembers kills every process in the cgroup dir: they belong to the
// container the cgroup is named after.
func killMembers(dir string) {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return
	}
	for _, f := range bytes.Fields(b) {
		if pid, err := strconv.Atoi(string(f)); err == nil && pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// deadCgroupAge is how long an empty sandbox cgroup must have existed
// before Cleanup removes it. runsc makes a sandbox's cgroups a moment
// before it moves the sandbox into them, and another server on this host
// (another runsc root) may be in that moment; none takes minutes.
const deadCgroupAge = 10 * time.Minute

// cgroupDirs lists the directories of cgroup path (a glob pattern) in the
// cgroup v1 hierarchies under base and in the v2 unified one at base.
func cgroupDirs(base, path string) []string {
	v1, _ := filepath.Glob(filepath.Join(base, "*", path))
	v2, _ := filepath.Glob(filepath.Join(base, path))
	return append(v1, v2...)
}

// removeDeadCgroups removes the sandbox cgroups (a sandbox ID under
// parent: CgroupsPath) in every hierarchy under base that hold no process
// and were made more than minAge before now: what sandboxes left when they
// died with their runsc state, or when that state was removed under them
// (a test's temporary root). Every server on the host shares the cgroup
// parent, so a cgroup still holding a process is left alone, whoever's it
// is: the kernel refuses to remove it (EBUSY) and nothing is killed. It
// returns how many sandboxes' cgroups it removed.
func removeDeadCgroups(base, parent string, minAge time.Duration, now time.Time) (int, error) {
	removed := map[string]bool{}
	var errs []error
	for _, dir := range cgroupDirs(base, filepath.Join(parent, "pd-*")) {
		id := filepath.Base(dir)
		if !sandboxID.MatchString(id) {
			continue
		}
		fi, err := os.Stat(dir)
		if err != nil || !fi.IsDir() || now.Sub(fi.ModTime()) < minAge {
			continue
		}
		switch err := syscall.Rmdir(dir); {
		case err == nil:
			removed[id] = true
		case errors.Is(err, syscall.EBUSY), errors.Is(err, syscall.ENOENT):
			// In use, or removed by its own runsc meanwhile.
		default:
			errs = append(errs, fmt.Errorf("removing cgroup %s: %w", dir, err))
		}
	}
	return len(removed), errors.Join(errs...)
}
