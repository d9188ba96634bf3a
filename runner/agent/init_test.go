package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/internal/prereq"
	"github.com/paddock-dev/paddock/runner/wire"
)

// startInitAgent starts an agent as PID 1 of a new PID namespace, as it
// runs in a sandbox: there kill(-1) reaches only that namespace.
func startInitAgent(t *testing.T, language string) *client {
	t.Helper()
	prereq.Root(t, "(for a PID namespace)")
	c := startAgentWith(t, testConfig(t, language), &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID})
	if h := c.hello(); h.Interpreter <= 1 {
		t.Fatalf("hello %+v: want the interpreter inside the namespace", h)
	}
	return c
}

// namespaceProcs lists the host PIDs of every process, zombies included, in
// the PID namespace whose init has host PID initPid.
func namespaceProcs(t *testing.T, initPid int) []string {
	t.Helper()
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", initPid))
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		t.Fatal(err)
	}
	var pids []string
	for _, d := range dirs {
		if l, err := os.Readlink(d + "/ns/pid"); err == nil && l == ns {
			stat, _ := os.ReadFile(d + "/stat")
			pids = append(pids, strings.TrimSpace(string(stat)))
		}
	}
	return pids
}

// waitAlone waits until the agent is the only process of its namespace.
func waitAlone(t *testing.T, c *client) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a safety net only
	for {
		procs := namespaceProcs(t, c.cmd.Process.Pid)
		if len(procs) == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes left in the sandbox namespace:\n%s", strings.Join(procs, "\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestInitKillsEveryProcess(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		language   string
		req        wire.Run
		wantStdout string
		wantReason string
	}{
		{
			name:     "python escaped sessions",
			language: LanguagePython,
			req: wire.Run{
				Code: "import subprocess\n" +
					"subprocess.Popen(['setsid', 'sleep', '600'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n" +
					"subprocess.Popen(['sleep', '600'], start_new_session=True)\n" +
					"print('done')",
				TimeoutMS: 60_000,
			},
			wantStdout: "done\n",
			wantReason: "ok",
		},
		{
			name:     "python timeout with an escaped child",
			language: LanguagePython,
			req: wire.Run{
				Code:      "import os, subprocess\nsubprocess.Popen(['sleep', '600'], start_new_session=True)\nwhile True: pass",
				TimeoutMS: 500,
			},
			wantReason: "timeout",
		},
		{
			name:     "node detached children",
			language: LanguageNode,
			req: wire.Run{
				Code: "const cp = require('child_process');\n" +
					"for (let i = 0; i < 3; i++) cp.spawn(process.execPath, ['-e', 'setInterval(() => {}, 1e9)'], {detached: true, stdio: 'ignore'}).unref();\n" +
					"console.log('done')",
				TimeoutMS: 60_000,
			},
			wantStdout: "done\n",
			wantReason: "ok",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := startInitAgent(t, tt.language)
			res := c.run(tt.req)
			exit := res.mustExit(t)
			if exit.Reason != tt.wantReason || string(res.stdout) != tt.wantStdout {
				t.Errorf("exit %+v, stdout %q, stderr %q; want %s, %q", exit, res.stdout, res.stderr, tt.wantReason, tt.wantStdout)
			}
			// A run that waited for its children would wait for their
			// 600 s sleeps; the bound is far from that and from any start.
			if res.elapsed > time.Minute {
				t.Errorf("result after %v: the run waited for its escaped children", res.elapsed)
			}
			waitAlone(t, c)
		})
	}
}
