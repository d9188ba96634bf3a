package main

import (
	"testing"
)

// TestE2BSDKPause drives the real SDK (doors/clients/e2b_pause.mjs) through
// pause, list by state, connect and fork on a real Paddock on gVisor with
// hibernation on (the state dir's hibernate/): pause() is true then false,
// the paused sandbox lists as paused, refuses calls (it has no
// autoResume) without waking, and Sandbox.connect wakes it with its
// variable, its file and its execution count; two forks each go on from
// the parent's state; sandboxes created with lifecycle.onTimeout 'pause'
// pause at their timeout, and wake on a call (autoResume) or on connect.
func TestE2BSDKPause(t *testing.T) {
	e := newE2EWith(t)
	got := nodeScript(t, "e2b_pause.mjs", "E2B_API_URL="+e.srv.URL, "E2B_SANDBOX_URL="+e.srv.URL, "E2B_API_KEY=unused")
	want := `{
		"before": {"count": 1, "error": null},
		"pause": {"paused": true, "again": false, "unknown": "SandboxNotFoundError"},
		"whilePaused": {"state": "paused", "onTimeout": "kill", "listedPaused": true, "listedRunning": true, "listedBoth": true,
			"isRunning": false, "runCode": "SandboxError", "command": "SandboxError", "stillPaused": "paused"},
		"connect": {"text": "42", "count": 2, "file": "kept", "state": "running", "timeout": true, "runningAgain": true},
		"fork": {"forks": [{"text": "43", "count": 3, "own": true}, {"text": "43", "count": 3, "own": true}], "parent": "41", "distinct": 2},
		"autoPause": {"paused": ["paused", "paused"], "lifecycle": {"onTimeout": "pause", "autoResume": true},
			"autoResumed": {"text": "8", "count": 2}, "refused": "SandboxError", "connected": {"text": "9", "count": 2}},
		"kill": {"pausedKilled": true, "connectAfter": "SandboxNotFoundError"}
	}`
	expectReport(t, got, want)
	if left := e.st.Kernels.ListAll(); len(left) != 0 {
		t.Errorf("sessions left after kill: %+v", left)
	}
}
