package runsc_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGVisorCleanupReapsUnlistedSandboxes is the crash a listing cannot
// see: a server killed while `runsc create` was still running leaves a
// sandbox and gofer whose state was never saved, and the create command
// itself. The test makes that state by starting a sandbox and deleting
// what runsc knows of it, and stands in for the command with a process
// naming the same root; Cleanup must leave none of them.
func TestGVisorCleanupReapsUnlistedSandboxes(t *testing.T) {
	e := newRealEnv(t)
	sb, err := e.rt.Start(t.Context(), e.specs["python"])
	if err != nil {
		t.Fatal(err)
	}
	id := sb.ID()
	root := filepath.Join(e.state, "runsc")
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, ent := range ents {
		if strings.Contains(ent.Name(), id) {
			if err := os.RemoveAll(filepath.Join(root, ent.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	if ids := e.list(t); len(ids) != 0 {
		t.Fatalf("runsc still lists %v after its state was removed", ids)
	}
	if len(processesNaming(id)) == 0 {
		t.Fatalf("no host process names %s: nothing to test", id)
	}
	// The stand-in is this test binary (see TestMain), waiting on a pipe
	// only the test closes: it can end only by a signal.
	create := exec.Command(os.Args[0], "--root="+root, "create", "--bundle="+filepath.Join(e.state, "bundles", id), id)
	create.Env = append(os.Environ(), standInEnv+"=1")
	hold, err := create.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	if err := create.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- create.Wait() }()

	n, err := e.rt.Cleanup(t.Context())
	if err != nil {
		t.Errorf("Cleanup: %v", err)
	}
	if n != 1 {
		t.Errorf("Cleanup destroyed %d containers, want 1", n)
	}
	// Cleanup returns once what it killed is dead: the stand-in is a zombie
	// or gone by now, and its status says SIGKILL.
	if state := processState(create.Process.Pid); state != "" && state != "Z" {
		t.Errorf("the stand-in create command is in state %s after Cleanup returned, want dead", state)
		_ = create.Process.Kill()
	}
	if err := <-exited; err == nil || err.Error() != "signal: killed" {
		t.Errorf("the stand-in create command ended with %v, want signal: killed", err)
	}
	if pids := processesNaming(id); len(pids) > 0 {
		t.Errorf("host processes of %s left: %v", id, pids)
	}
	for _, pattern := range []string{"/sys/fs/cgroup/*/paddock/" + id, "/sys/fs/cgroup/paddock/" + id} {
		if dirs, _ := filepath.Glob(pattern); len(dirs) > 0 {
			t.Errorf("cgroups of %s left: %v", id, dirs)
		}
	}
	if _, err := os.Stat(filepath.Join(e.state, "bundles", id)); !os.IsNotExist(err) {
		t.Errorf("bundle of %s left (stat: %v)", id, err)
	}
	_ = sb.Destroy(context.Background()) // already gone: only releases the host ends
}

// ReapOthers destroys what another server instance made under the same
// root, and nothing of this one's.
func TestGVisorReapOthers(t *testing.T) {
	e := newRealEnv(t)
	ours, theirs := e.specs["python"], e.specs["python"]
	ours.Labels = map[string]string{"instance": "me"}
	theirs.Labels = map[string]string{"instance": "earlier"}
	mine, err := e.rt.Start(t.Context(), ours)
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Destroy(context.Background())
	other, err := e.rt.Start(t.Context(), theirs)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Destroy(context.Background())

	n, err := e.rt.ReapOthers(t.Context(), "instance", "me")
	if err != nil || n != 1 {
		t.Fatalf("ReapOthers = %d, %v; want 1 destroyed", n, err)
	}
	if ids := e.list(t); len(ids) != 1 || ids[0] != mine.ID() {
		t.Errorf("runsc lists %v after the reap, want only this instance's %s", ids, mine.ID())
	}
	if pids := processesNaming(other.ID()); len(pids) > 0 {
		t.Errorf("host processes of the other instance's sandbox left: %v", pids)
	}
	if err := mine.Destroy(t.Context()); err != nil {
		t.Errorf("destroying this instance's sandbox: %v", err)
	}
}

// processState is the state letter of pid in /proc (R, S, Z, ...), or ""
// when there is no such process.
func processState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	// The state follows the command name, which is in parentheses.
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
		return string(b[i+2])
	}
	return ""
}

// processesNaming returns the host pids whose command line contains s.
func processesNaming(s string) []string {
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var pids []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(s)) {
			pids = append(pids, filepath.Base(filepath.Dir(p)))
		}
	}
	return pids
}
