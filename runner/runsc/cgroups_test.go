package runsc

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/internal/prereq"
	"github.com/paddock-dev/paddock/runner/ocispec"
)

// TestRemoveDeadCgroups makes real cgroups under a parent of its own (the
// sandboxes' parent is shared with the other tests' sandboxes, whose
// cgroups are empty for a moment as runsc starts them): an empty one is
// removed from every hierarchy once it is old enough, one holding a
// process stays and the process lives on, a young one stays, and a name
// that is no sandbox ID is not touched.
func TestRemoveDeadCgroups(t *testing.T) {
	prereq.Root(t, "(the test makes host cgroups)")
	hierarchies := []string{"memory", "pids"}
	for _, h := range hierarchies {
		if _, err := os.Stat(filepath.Join(ocispec.CgroupRoot, h, "cgroup.procs")); err != nil {
			prereq.Missing(t, "no cgroup v1 "+h+" hierarchy at "+ocispec.CgroupRoot, "run on a host with cgroup v1 (hybrid) hierarchies, as Paddock's sandboxes need")
		}
	}
	parent := fmt.Sprintf("/paddock-test-%08x", rand.Uint32())
	id := func() string { return fmt.Sprintf("pd-%016x", rand.Uint64()) }
	dead, busy, odd := id(), id(), "pd-notasandbox"
	mk := func(name string) {
		t.Helper()
		for _, h := range hierarchies {
			if err := os.MkdirAll(filepath.Join(ocispec.CgroupRoot, h, parent, name), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk(dead)
	mk(busy)
	mk(odd)
	t.Cleanup(func() {
		for _, h := range hierarchies {
			for _, name := range []string{dead, busy, odd, ""} {
				_ = os.Remove(filepath.Join(ocispec.CgroupRoot, h, parent, name))
			}
		}
	})

	sleeper := exec.Command("sleep", "600")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() })
	pid := []byte(strconv.Itoa(sleeper.Process.Pid))
	for _, h := range hierarchies {
		if err := os.WriteFile(filepath.Join(ocispec.CgroupRoot, h, parent, busy, "cgroup.procs"), pid, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	exists := func(name string) (n int) {
		for _, h := range hierarchies {
			if _, err := os.Stat(filepath.Join(ocispec.CgroupRoot, h, parent, name)); err == nil {
				n++
			}
		}
		return n
	}

	// Made just now: too young at the server's own age.
	n, err := removeDeadCgroups(ocispec.CgroupRoot, parent, deadCgroupAge, time.Now())
	if err != nil || n != 0 {
		t.Fatalf("young cgroups: removed %d, err %v; want 0, nil", n, err)
	}
	if exists(dead) != len(hierarchies) {
		t.Fatalf("a young empty cgroup was removed")
	}

	// An hour on, every empty sandbox cgroup is old enough.
	n, err = removeDeadCgroups(ocispec.CgroupRoot, parent, deadCgroupAge, time.Now().Add(time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("removed %d sandboxes' cgroups, err %v; want 1, nil", n, err)
	}
	if got := exists(dead); got != 0 {
		t.Errorf("the dead sandbox's cgroup is left in %d hierarchies", got)
	}
	if got := exists(busy); got != len(hierarchies) {
		t.Errorf("the cgroup holding a process is left in %d of %d hierarchies", got, len(hierarchies))
	}
	if got := exists(odd); got != len(hierarchies) {
		t.Errorf("a cgroup that is no sandbox's is left in %d of %d hierarchies", got, len(hierarchies))
	}
	if !alive(sleeper.Process.Pid) {
		t.Errorf("the process in the busy cgroup was killed")
	}
}
