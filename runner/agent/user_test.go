package agent

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/paddock-dev/paddock/internal/prereq"
	"github.com/paddock-dev/paddock/runner/wire"
)

// userWorkdir returns a fresh directory that another user can reach.
func userWorkdir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for p := dir; p != os.TempDir() && p != "/"; p = filepath.Dir(p) {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "workspace")
}

func TestRunsAsUser(t *testing.T) {
	t.Parallel()
	prereq.Root(t, "(to switch users)")
	cfg := testConfig(t, LanguageNode)
	cfg.UID, cfg.GID = 1000, 1000
	cfg.Workdir = userWorkdir(t)
	c := startAgent(t, cfg)
	c.hello()
	res := c.run(wire.Run{
		Code:  "const fs = require('fs'); console.log(process.getuid(), process.getgid(), JSON.stringify(fs.readFileSync('/proc/self/status', 'utf8').match(/^Groups:(.*)$/m)[1].trim())); fs.writeFileSync('made.txt', 'x')",
		Files: []wire.File{{Path: "d/in.txt", Content: []byte("in")}},
	})
	if exit := res.mustExit(t); exit.Reason != "ok" {
		t.Fatalf("exit %+v, stderr %q", exit, res.stderr)
	}
	if want := "1000 1000 \"\"\n"; string(res.stdout) != want {
		t.Errorf("stdout = %q, want %q", res.stdout, want)
	}
	for _, p := range []string{".", "d", "d/in.txt", "made.txt"} {
		fi, err := os.Stat(filepath.Join(cfg.Workdir, p))
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if st.Uid != 1000 || st.Gid != 1000 {
			t.Errorf("%s owned by %d:%d, want 1000:1000", p, st.Uid, st.Gid)
		}
	}
}

// The user owns the interpreter's pipes: it may reopen them by name.
func TestUserReopensPipes(t *testing.T) {
	t.Parallel()
	prereq.Root(t, "(to switch users)")
	cfg := testConfig(t, LanguageNode)
	cfg.UID, cfg.GID = 1000, 1000
	cfg.Workdir = userWorkdir(t)
	c := startAgent(t, cfg)
	c.hello()
	res := c.run(wire.Run{Code: "require('fs').writeFileSync('/dev/stdout', 'out\\n'); require('child_process').execSync('echo err > /dev/stderr', {stdio: 'inherit'})"})
	if exit := res.mustExit(t); exit.Reason != "ok" || string(res.stdout) != "out\n" || string(res.stderr) != "err\n" {
		t.Errorf("exit %+v, stdout %q, stderr %q", exit, res.stdout, res.stderr)
	}
}
