package agentconn

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/wire"
)

func TestIntrospectAnswers(t *testing.T) {
	t.Parallel()
	k, a := openFake(t)
	in := k.(runner.Introspector)

	type result struct {
		v   any
		err error
	}
	got := make(chan result, 1)
	go func() {
		c, err := in.Complete(t.Context(), "import é", 8)
		got <- result{c, err}
	}()
	var q wire.Introspect
	a.expect(wire.TypeIntrospect, &q)
	if q.Op != wire.OpComplete || q.Code != "import é" || q.CursorPos != 8 {
		t.Fatalf("question %+v", q)
	}
	// An answer past the code's end is cut to it; no matches is a list.
	a.send(wire.TypeAck, wire.Ack{ID: q.ID, Answer: &wire.Answer{CursorStart: 7, CursorEnd: 99}})
	if r := <-got; r.err != nil || !reflect.DeepEqual(r.v, runner.Completion{Matches: []string{}, CursorStart: 7, CursorEnd: 8}) {
		t.Errorf("complete: %+v, %v", r.v, r.err)
	}

	go func() {
		i, err := in.Inspect(t.Context(), "f", 1, 1)
		got <- result{i, err}
	}()
	a.expect(wire.TypeIntrospect, &q)
	if q.Op != wire.OpInspect || q.DetailLevel != 1 {
		t.Fatalf("question %+v", q)
	}
	// Found without text is not found.
	a.send(wire.TypeAck, wire.Ack{ID: q.ID, Answer: &wire.Answer{Found: true, Data: map[string]any{"text/html": "<b>"}}})
	if r := <-got; r.err != nil || !reflect.DeepEqual(r.v, runner.Inspection{Found: false, Data: map[string]any{}, Metadata: map[string]any{}}) {
		t.Errorf("inspect: %+v, %v", r.v, r.err)
	}

	go func() {
		c, err := in.IsComplete(t.Context(), "x")
		got <- result{c, err}
	}()
	a.expect(wire.TypeIntrospect, &q)
	a.send(wire.TypeAck, wire.Ack{ID: q.ID, Answer: &wire.Answer{Status: "maybe", Indent: "  "}})
	if r := <-got; r.err != nil || !reflect.DeepEqual(r.v, runner.Completeness{Status: runner.CodeUnknown}) {
		t.Errorf("is_complete with an unknown status: %+v, %v", r.v, r.err)
	}

	go func() {
		c, err := in.IsComplete(t.Context(), "x")
		got <- result{c, err}
	}()
	a.expect(wire.TypeIntrospect, &q)
	a.send(wire.TypeAck, wire.Ack{ID: q.ID, Error: "the interpreter could not answer"})
	if r := <-got; r.err == nil || !strings.Contains(r.err.Error(), "could not answer") {
		t.Errorf("refused question: %+v, %v", r.v, r.err)
	}
}

// inputCell starts a cell with input and returns its Execute as the agent
// saw it and the channel of its result.
func inputCell(t *testing.T, k runner.Kernel, a *fakeAgent, input runner.InputFunc) (wire.Execute, chan runner.ExecuteResult) {
	t.Helper()
	res := make(chan runner.ExecuteResult, 1)
	var events []runner.Event
	go func() {
		r, err := k.Execute(t.Context(), runner.ExecuteRequest{Code: "input()", Timeout: time.Minute, Input: input}, func(e runner.Event) { events = append(events, e) })
		if err != nil {
			t.Errorf("Execute: %v", err)
		}
		res <- r
	}()
	var ex wire.Execute
	a.expect(wire.TypeExecute, &ex)
	return ex, res
}

func TestInputRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		input runner.InputFunc
		want  wire.InputReply
	}{
		{
			name: "value",
			input: func(ctx context.Context, r runner.InputRequest) (string, error) {
				return r.Prompt + "|" + map[bool]string{true: "hidden", false: "shown"}[r.Password], nil
			},
			want: wire.InputReply{Value: "pw: |hidden"},
		},
		{
			name: "error",
			input: func(context.Context, runner.InputRequest) (string, error) {
				return "ignored", errors.New("the client left")
			},
			want: wire.InputReply{Error: "the client left"},
		},
		{
			name: "too long",
			input: func(context.Context, runner.InputRequest) (string, error) {
				return strings.Repeat("x", runner.MaxInputBytes+1), nil
			},
			want: wire.InputReply{Error: "an input of 1048577 bytes is over the limit of 1048576"},
		},
		{
			name: "not allowed",
			want: wire.InputReply{Error: "raw_input was called, but this frontend does not support input requests."},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k, a := openFake(t)
			ex, res := inputCell(t, k, a, tt.input)
			if ex.Stdin != (tt.input != nil) {
				t.Errorf("Execute.Stdin %v with input %v", ex.Stdin, tt.input != nil)
			}
			a.send(wire.TypeInputRequest, wire.InputRequest{ID: ex.ID, Prompt: "pw: ", Password: true})
			var reply wire.InputReply
			a.expect(wire.TypeInputReply, &reply)
			tt.want.ID = ex.ID
			if !reflect.DeepEqual(reply, tt.want) {
				t.Errorf("reply %+v, want %+v", reply, tt.want)
			}
			a.send(wire.TypeDone, wire.Done{ID: ex.ID, ExecutionCount: 1, Status: "ok", Reason: "ok"})
			if r := <-res; r.Status != runner.StatusOK {
				t.Errorf("result %+v", r)
			}
		})
	}
}

// TestInputEndsWithCell: the input's context ends with the cell, and its
// late answer is never sent.
func TestInputEndsWithCell(t *testing.T) {
	t.Parallel()
	k, a := openFake(t)
	asked := make(chan struct{})
	ended := make(chan error, 1)
	ex, res := inputCell(t, k, a, func(ctx context.Context, r runner.InputRequest) (string, error) {
		close(asked)
		<-ctx.Done()
		ended <- ctx.Err()
		return "late", nil
	})
	// A request of another cell is ignored.
	a.send(wire.TypeInputRequest, wire.InputRequest{ID: ex.ID + 100})
	a.send(wire.TypeInputRequest, wire.InputRequest{ID: ex.ID, Prompt: "?"})
	<-asked
	a.send(wire.TypeDone, wire.Done{ID: ex.ID, ExecutionCount: 1, Status: "aborted", Reason: "interrupted"})
	if r := <-res; r.Reason != runner.ReasonInterrupted {
		t.Errorf("result %+v", r)
	}
	if err := <-ended; !errors.Is(err, context.Canceled) {
		t.Errorf("input ctx ended with %v", err)
	}
	// The next frame the host sends is the interrupt below, not a reply.
	go func() { _ = k.Interrupt(context.Background()) }()
	var r wire.Request
	a.expect(wire.TypeInterrupt, &r)
	a.send(wire.TypeAck, wire.Ack{ID: r.ID})
}

func TestDisplayEvents(t *testing.T) {
	t.Parallel()
	k, a := openFake(t)
	var events []runner.Event
	res := make(chan runner.ExecuteResult, 1)
	go func() {
		r, _ := k.Execute(t.Context(), runner.ExecuteRequest{Code: "x", Timeout: time.Minute}, func(e runner.Event) { events = append(events, e) })
		res <- r
	}()
	var ex wire.Execute
	a.expect(wire.TypeExecute, &ex)
	a.send(wire.TypeEvent, wire.Event{ID: ex.ID, Type: "update_display_data", Data: map[string]any{"text/plain": "b"}, Transient: map[string]any{"display_id": "d"}})
	a.send(wire.TypeEvent, wire.Event{ID: ex.ID, Type: "clear_output", Wait: true})
	a.send(wire.TypeDone, wire.Done{ID: ex.ID, ExecutionCount: 1, Status: "ok", Reason: "ok"})
	<-res
	want := []runner.Event{
		{Type: runner.EventUpdateDisplayData, Data: map[string]any{"text/plain": "b"}, Transient: map[string]any{"display_id": "d"}},
		{Type: runner.EventClearOutput, Wait: true},
	}
	if !reflect.DeepEqual(events, want) {
		t.Errorf("events %+v, want %+v", events, want)
	}
}
