package agent

import (
	"reflect"
	"testing"

	"github.com/paddock-dev/paddock/runner/wire"
)

func TestDoneFrame(t *testing.T) {
	t.Parallel()
	e := &wire.ExecError{Name: "ValueError", Value: "v", Traceback: []string{"ValueError: v"}}
	selfInterrupt := &wire.ExecError{Name: "KeyboardInterrupt", Value: "the cell interrupted itself (no interrupt was sent)", Traceback: []string{}}
	tests := []struct {
		name        string
		status      string
		abort       string
		interrupted bool
		err         *wire.ExecError
		want        wire.Done
	}{
		{name: "ok", status: "ok", want: wire.Done{ID: 7, ExecutionCount: 3, Status: "ok", Reason: "ok"}},
		{name: "error", status: "error", err: e, want: wire.Done{ID: 7, ExecutionCount: 3, Status: "error", Reason: "error", Error: e}},
		{name: "interrupted", status: "interrupted", interrupted: true, want: wire.Done{ID: 7, ExecutionCount: 3, Status: "aborted", Reason: "interrupted"}},
		{name: "interrupted by nobody", status: "interrupted", want: wire.Done{ID: 7, ExecutionCount: 3, Status: "error", Reason: "error", Error: selfInterrupt}},
		{name: "a reason is no status", status: "timeout", want: wire.Done{ID: 7, ExecutionCount: 3, Status: "aborted", Reason: "error"}},
		{name: "oom is no status", status: "oom", want: wire.Done{ID: 7, ExecutionCount: 3, Status: "aborted", Reason: "error"}},
		{name: "timeout", status: "interrupted", abort: "timeout", want: wire.Done{ID: 7, ExecutionCount: 3, Status: "aborted", Reason: "timeout"}},
		{name: "timeout caught by the cell", status: "ok", abort: "timeout", want: wire.Done{ID: 7, ExecutionCount: 3, Status: "aborted", Reason: "timeout"}},
		{name: "output limit over an error", status: "error", abort: "output_limit", err: e, want: wire.Done{ID: 7, ExecutionCount: 3, Status: "aborted", Reason: "output_limit"}},
		{name: "unknown status", status: "weird", want: wire.Done{ID: 7, ExecutionCount: 3, Status: "aborted", Reason: "error"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := doneFrame(&cell{id: 7, count: 3, abort: tt.abort, interrupted: tt.interrupted}, tt.status, tt.err)
			if got.ID != tt.want.ID || got.ExecutionCount != tt.want.ExecutionCount || got.Status != tt.want.Status || got.Reason != tt.want.Reason || !reflect.DeepEqual(got.Error, tt.want.Error) {
				t.Errorf("doneFrame = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestCutUTF8(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    string
		n    int
		want string
	}{
		{name: "ascii", s: "abcdef", n: 3, want: "abc"},
		{name: "whole", s: "abc", n: 3, want: "abc"},
		{name: "zero", s: "abc", n: 0, want: ""},
		{name: "inside a rune", s: "aé", n: 2, want: "a"},
		{name: "after a rune", s: "aéb", n: 3, want: "aé"},
		{name: "inside a four-byte rune", s: "😀x", n: 3, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cutUTF8(tt.s, tt.n); got != tt.want {
				t.Errorf("cutUTF8(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
			}
		})
	}
}

func TestEventLocked(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		ev     wire.Event
		want   wire.Event
		wantOK bool
	}{
		{name: "stream", ev: wire.Event{ID: 99, Type: "stream", Stream: "stdout", Text: "hello"}, want: wire.Event{ID: 5, Type: "stream", Stream: "stdout", Text: "hello"}, wantOK: true},
		{name: "stream over the quota", ev: wire.Event{Type: "stream", Stream: "stderr", Text: "hello world"}, want: wire.Event{ID: 5, Type: "stream", Stream: "stderr", Text: "hello worl"}, wantOK: true},
		{name: "unknown stream", ev: wire.Event{Type: "stream", Stream: "stdin", Text: "x"}, wantOK: false},
		{name: "result gets the count", ev: wire.Event{Type: "execute_result", Data: map[string]any{"text/plain": "1"}, ExecutionCount: 42}, want: wire.Event{ID: 5, Type: "execute_result", Data: map[string]any{"text/plain": "1"}, ExecutionCount: 2}, wantOK: true},
		{name: "display has no count", ev: wire.Event{Type: "display_data", ExecutionCount: 42}, want: wire.Event{ID: 5, Type: "display_data"}, wantOK: true},
		{name: "unknown type", ev: wire.Event{Type: "status"}, wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := &kernel{}
			c := &cell{id: 5, count: 2, proc: &kproc{interp: &interpreter{exited: closedChan()}}, quota: quota{limit: 10}}
			got, ok := k.eventLocked(c, tt.ev)
			if ok != tt.wantOK {
				t.Fatalf("eventLocked ok = %v, want %v", ok, tt.wantOK)
			}
			if ok && (got.ID != tt.want.ID || got.Type != tt.want.Type || got.Stream != tt.want.Stream || got.Text != tt.want.Text || got.ExecutionCount != tt.want.ExecutionCount) {
				t.Errorf("eventLocked = %+v, want %+v", got, tt.want)
			}
			for _, tm := range c.timers {
				tm.Stop()
			}
		})
	}
}

func closedChan() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}
