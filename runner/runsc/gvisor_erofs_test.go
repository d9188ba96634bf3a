package runsc_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/internal/prereq"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runsc"
)

// commandsOf returns the command lines of the host processes that name
// id (processesNaming) and run prog.
func commandsOf(t *testing.T, prog, id string) []string {
	t.Helper()
	var found []string
	for _, pid := range processesNaming(id) {
		b, err := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
		if err != nil {
			continue // gone meanwhile
		}
		if cmd := strings.ReplaceAll(string(b), "\x00", " "); strings.HasPrefix(cmd, prog+" ") {
			found = append(found, cmd)
		}
	}
	return found
}

// A sandbox on EROFS images runs with no gofer process beside its Sentry,
// its root filesystem and agent come from the images, and its writable
// layer takes files up to the disk limit and refuses more.
func TestGVisorGoferFree(t *testing.T) {
	prereq.Command(t, "mkfs.erofs", "erofs-utils")
	e := newRealEnv(t)
	if !e.rt.GoferFree() {
		t.Fatal("the runtime fell back to a gofer although mkfs.erofs is installed (see its warning)")
	}
	spec := e.specs["python"]
	spec.Limits.DiskBytes = 8 << 20
	sb, err := e.rt.Start(t.Context(), spec)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	defer func() {
		if err := sb.Destroy(context.Background()); err != nil {
			t.Errorf("destroy: %v", err)
		}
	}()
	if got := commandsOf(t, "runsc-sandbox", sb.ID()); len(got) != 1 {
		t.Fatalf("want one runsc-sandbox process for %s, found %d", sb.ID(), len(got))
	}
	if got := commandsOf(t, "runsc-gofer", sb.ID()); len(got) != 0 {
		t.Fatalf("a gofer runs beside the sandbox: %q", got)
	}
	code := `
import os, sys
with open('/workspace/a', 'wb') as f: f.write(b'x' * (4 << 20))
print(os.path.getsize('/workspace/a'), sys.version_info[0])
try:
    with open('/workspace/b', 'wb') as f: f.write(b'y' * (8 << 20))
    print('no limit')
except OSError as e:
    print(e.errno)
`
	res, err := sb.Run(t.Context(), runner.RunRequest{Code: code, Timeout: 20 * time.Second, MaxStdout: 1 << 10, MaxStderr: 1 << 12}, nil)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if got, want := string(res.Stdout), "4194304 3\n28\n"; got != want { // 28: ENOSPC
		t.Fatalf("stdout %q, want %q (stderr %q)", got, want, res.Stderr)
	}
}

// The agent's image is the same bytes wherever it is made from the same
// agent: servers that share snapshots each make their own, and a restore
// needs the superblock its checkpoint ran on.
func TestGVisorAgentImageIsReproducible(t *testing.T) {
	prereq.Command(t, "mkfs.erofs", "erofs-utils")
	agent := os.Getenv("PADDOCK_AGENT")
	if agent == "" {
		agent = filepath.Join(t.TempDir(), "paddock-agent")
		if err := os.WriteFile(agent, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var images [2][]byte
	for i := range images {
		state := t.TempDir()
		rt, err := runsc.New(runsc.Config{Runsc: "/bin/true", StateDir: state, Agent: agent})
		if err != nil {
			t.Fatal(err)
		}
		if !rt.GoferFree() {
			t.Fatal("no agent image made")
		}
		if images[i], err = os.ReadFile(filepath.Join(state, "agent.erofs")); err != nil {
			t.Fatal(err)
		}
		if err := rt.Close(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1100 * time.Millisecond) // a build time in seconds would differ
	}
	if string(images[0]) != string(images[1]) {
		t.Fatal("two images of one agent differ")
	}
}
