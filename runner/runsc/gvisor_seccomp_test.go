package runsc_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runsc"
)

// TestGVisorSeccompPrecompiled checks that the runsc `make` builds starts
// its Sentry and gofer on precompiled seccomp programs instead of
// compiling them (tens of ms of CPU per sandbox), for the options Paddock
// starts sandboxes with. A plain `go install` of runsc fails it, and so
// would a gVisor upgrade whose option keys no longer match the programs
// deploy/runsc/precompile.go keeps. It runs with a gofer (Config.Gofer) so
// that the gofer's filter is checked too; the Sentry's options are the
// same either way.
func TestGVisorSeccompPrecompiled(t *testing.T) {
	e := newRealEnv(t)
	logs := t.TempDir()
	rt := ownRuntime(t, e, runsc.Config{DebugLog: logs, Gofer: true})
	sb, err := rt.Start(t.Context(), e.specs["python"])
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	res, err := sb.Run(t.Context(), runner.RunRequest{Code: "print(6*7)", Timeout: 10 * time.Second, MaxStdout: 1 << 10, MaxStderr: 1 << 10}, nil)
	if derr := sb.Destroy(context.Background()); derr != nil {
		t.Errorf("destroy: %v", derr)
	}
	if err != nil || string(res.Stdout) != "42\n" {
		t.Fatalf("run with debug logs: %q, %v", res.Stdout, err)
	}

	files, err := os.ReadDir(logs)
	if err != nil {
		t.Fatal(err)
	}
	loaded := map[string]int{} // "boot" or "gofer": logs that loaded a precompiled program
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(logs, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if i := strings.Index(text, "No precompiled program found"); i >= 0 {
			line, _, _ := strings.Cut(text[i:], "\n")
			t.Errorf("%s: runsc built a seccomp program at start: %s", f.Name(), line)
		}
		for _, kind := range []string{"boot", "gofer"} {
			if strings.HasSuffix(f.Name(), "."+kind+".txt") && strings.Contains(text, "Loaded precompiled seccomp instructions") {
				loaded[kind]++
			}
		}
	}
	if loaded["boot"] == 0 || loaded["gofer"] == 0 {
		names := make([]string, len(files))
		for i, f := range files {
			names[i] = f.Name()
		}
		t.Fatalf("precompiled seccomp programs loaded by %v (need the sandbox's boot and its gofer); logs: %v", loaded, names)
	}
}
