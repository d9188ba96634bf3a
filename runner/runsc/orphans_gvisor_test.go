package runsc_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	create := exec.Command("python3", "-c", "import time; time.sleep(600)", "--root="+root, "create", "--bundle="+filepath.Join(e.state, "bundles", id), id)
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
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Error("the stand-in create command outlived Cleanup")
		_ = create.Process.Kill()
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
