package host

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRunscAnonSplitsSentryAndGofer(t *testing.T) {
	proc, cg := t.TempDir(), t.TempDir()
	process := func(pid, cmdline, smaps string) {
		mkdir(t, filepath.Join(proc, pid))
		if err := os.WriteFile(filepath.Join(proc, pid, "cmdline"), []byte(cmdline), 0o600); err != nil {
			t.Fatal(err)
		}
		if smaps != "" {
			if err := os.WriteFile(filepath.Join(proc, pid, "smaps_rollup"), []byte(smaps), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	process("10", "runsc-sandbox\x00--root=/x\x00boot\x00", "7f00-7f01 ---p 00000000 00:00 0 [rollup]\nRss:   51580 kB\nAnonymous:   16016 kB\n")
	process("11", "runsc-gofer\x00--root=/x\x00gofer\x00", "Rss:   26020 kB\nAnonymous:    5100 kB\n")
	process("12", "\x00", "Anonymous:      32 kB\n")                  // a systrap stub
	process("13", "runsc-sandbox-like\x00", "Anonymous:    999 kB\n") // another name
	process("14", "runsc-gofer\x00", "")                              // ended before its smaps were read
	procs := filepath.Join(cg, "cgroup.procs")
	if err := os.WriteFile(procs, []byte("10\n11\n12\n13\n14\n15\n"), 0o600); err != nil { // 15 has ended
		t.Fatal(err)
	}
	sentry, gofer, err := RunscAnon(procs, proc)
	if err != nil {
		t.Fatal(err)
	}
	if sentry != 16400384 || gofer != 5222400 {
		t.Errorf("sentry %d, gofer %d; want 16400384, 5222400", sentry, gofer)
	}
	if _, _, err := RunscAnon(filepath.Join(cg, "missing"), proc); err == nil {
		t.Error("a missing cgroup.procs read without error")
	}
}
