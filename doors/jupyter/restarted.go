package jupyterdoor

import "encoding/json"

// A kernel that dies, or is killed because a cell did not stop when
// interrupted at its timeout, is replaced by the core with a fresh one
// under the same kernel id, as Jupyter Server restarts a dead kernel. The
// cell's execute_reply names the restart and its "idle" ends it, so that
// the cell's own future is done; then iopub says "restarting" and
// "starting", as after Jupyter Server's auto-restart: @jupyterlab/services
// then drops its pending requests and reconnects.
//
// All of these carry the fresh kernel's session id: @jupyterlab/services
// takes the session of the newest message received as the kernel's and
// drops, unhandled, a queued message of another session, so a reply of
// the old session followed at once by statuses of the new one would be
// lost. (Jupyter Server's own "restarting" carries its WebSocket
// handler's session, not the kernel's.) A kernel for which no fresh one
// could be had is "dead" after the cell's idle.

// restartedAs names a cell whose kernel died with it (why says how).
func restartedAs(why string, restarted bool) (ename, evalue string) {
	if restarted {
		return "KernelRestarted", "the kernel was restarted (" + why + "); its variables, imports and files are gone"
	}
	return "DeadKernelError", "the kernel died (" + why + ") and no fresh one could be had; start a new kernel"
}

// restarted tells every client that the kernel was replaced by a fresh
// one (its new session id already taken, see renew), or, when it was
// not, that it is dead.
func (h *hub) restarted(hs *hubs, parent json.RawMessage, fresh bool) {
	if !fresh {
		h.status("dead", parent)
		return
	}
	hs.noteRestart(h, parent)
	h.status("restarting", parent)
	h.status("starting", parent)
}
