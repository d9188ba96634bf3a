package agentconn

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/wire"
)

// fakeCgroup points cgroupFS at a temporary tree holding a v1 memory
// cgroup for sandbox id with oom_kill n, and returns the counter's file.
func fakeCgroup(t *testing.T, id string, n int) string {
	t.Helper()
	old := cgroupFS
	cgroupFS = t.TempDir()
	t.Cleanup(func() { cgroupFS = old })
	dir := filepath.Join(cgroupFS, "memory", "paddock", id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "memory.oom_control")
	body := "oom_kill_disable 0\nunder_oom 0\noom_kill " + strconv.Itoa(n) + "\n"
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// dispatching starts dispatch on a kernel of a sandbox that exists only
// as its frame channel.
func dispatching(id string) (*kernel, chan wire.Frame) {
	frames := make(chan wire.Frame)
	s := &Conn{id: id, frames: frames, log: slog.New(slog.DiscardHandler),
		hooks: Hooks{OOMKills: func() int { return CgroupOOMKills("/paddock/" + id) }}}
	k := &kernel{s: s, pending: map[uint64]chan wire.Ack{}, lost: make(chan struct{})}
	go k.dispatch()
	return k, frames
}

func frame(t *testing.T, typ wire.Type, v any) wire.Frame {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return wire.Frame{Type: typ, Payload: b}
}

// The memory cgroup is read when the loss is seen: releasing the lost
// session's sandbox deletes the cgroup, and with it the counter, while the
// cell's caller may not yet have asked why.
func TestKernelLossReadsOOMWhenSeen(t *testing.T) {
	t.Run("lost frame", func(t *testing.T) {
		file := fakeCgroup(t, "pd-oom1", 1)
		k, frames := dispatching("pd-oom1")
		frames <- frame(t, wire.TypeLost, wire.Lost{Message: "the interpreter ended: signal: killed", Signal: 9})
		<-k.Lost()
		if err := os.Remove(file); err != nil { // the sandbox was released
			t.Fatal(err)
		}
		if got := k.lossReason(); got != runner.ReasonOOM {
			t.Errorf("loss reason after the cgroup went = %q, want oom", got)
		}
		close(frames)
	})
	t.Run("done of the cell", func(t *testing.T) {
		file := fakeCgroup(t, "pd-oom2", 1)
		k, frames := dispatching("pd-oom2")
		c := &cell{id: 7, done: make(chan wire.Done, 1)}
		k.cell = c
		frames <- frame(t, wire.TypeDone, wire.Done{ID: 7, ExecutionCount: 3, Status: "aborted", Reason: "kernel_lost"})
		d := <-c.done
		if err := os.Remove(file); err != nil {
			t.Fatal(err)
		}
		if got := k.result(d, 0); got.Reason != runner.ReasonOOM || got.ExecutionCount != 3 {
			t.Errorf("result = %+v, want reason oom, count 3", got)
		}
		close(frames)
	})
	t.Run("no oom kill", func(t *testing.T) {
		fakeCgroup(t, "pd-oom3", 0)
		k, frames := dispatching("pd-oom3")
		close(frames)
		<-k.Lost()
		if got := k.lossReason(); got != runner.ReasonKernelLost {
			t.Errorf("loss reason = %q, want kernel_lost", got)
		}
	})
}
