package kernels_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

func TestIntrospect(t *testing.T) {
	rt := &runnertest.Runtime{}
	refuse := refuseStarts(rt)
	f := newFixture(t, rt, kernels.Config{})
	info := f.create(t, "alice", kernels.CreateOptions{})
	if x, err := f.m.Execute(t.Context(), "alice", info.ID, kernels.ExecuteOptions{Code: "answer = 42\nanswers = 2"}, nil); err != nil || x.Status != runner.StatusOK {
		t.Fatalf("Execute: %+v, %v", x, err)
	}
	c, err := f.m.Complete(t.Context(), "alice", info.ID, "x = ans", 7)
	if want := (runner.Completion{Matches: []string{"answer", "answers"}, CursorStart: 4, CursorEnd: 7}); err != nil || !reflect.DeepEqual(c, want) {
		t.Errorf("Complete: %+v, %v; want %+v", c, err, want)
	}
	i, err := f.m.Inspect(t.Context(), "alice", info.ID, "answer", 2, 0)
	if want := (runner.Inspection{Found: true, Data: map[string]any{"text/plain": "42"}, Metadata: map[string]any{}}); err != nil || !reflect.DeepEqual(i, want) {
		t.Errorf("Inspect: %+v, %v; want %+v", i, err, want)
	}
	ic, err := f.m.IsComplete(t.Context(), "alice", info.ID, "if x:")
	if want := (runner.Completeness{Status: runner.CodeIncomplete, Indent: "    "}); err != nil || ic != want {
		t.Errorf("IsComplete: %+v, %v; want %+v", ic, err, want)
	}

	// Another owner's session is not found; a lost one is lost.
	if _, err := f.m.Complete(t.Context(), "bob", info.ID, "a", 1); !errors.Is(err, kernels.ErrSessionNotFound) {
		t.Errorf("another owner's Complete: %v, want ErrSessionNotFound", err)
	}
	f.lose(t, refuse, "alice", info)
	if _, err := f.m.IsComplete(t.Context(), "alice", info.ID, "a"); !errors.Is(err, kernels.ErrSessionLost) {
		t.Errorf("IsComplete on a lost session: %v, want ErrSessionLost", err)
	}
}

// TestIntrospectBesideCell: questions never wait for the session's turn.
func TestIntrospectBesideCell(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, kernels.Config{})
	info := f.create(t, "", kernels.CreateOptions{})
	cell := f.goExecute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "sleep 1h"})
	waitFor(t, "the cell to run", func() bool { return state(f.m, "", info.ID)() == kernels.StateBusy })
	if _, err := f.m.Complete(t.Context(), "", info.ID, "x", 1); err != nil {
		t.Errorf("Complete while a cell runs: %v", err)
	}
	if err := f.m.Interrupt(t.Context(), "", info.ID); err != nil {
		t.Fatal(err)
	}
	if r := <-cell; r.err != nil || r.res.Reason != runner.ReasonInterrupted {
		t.Errorf("cell: %+v, %v", r.res, r.err)
	}
}

func TestExecuteInput(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, kernels.Config{})
	info := f.create(t, "", kernels.CreateOptions{})
	var asked []runner.InputRequest
	input := func(ctx context.Context, r runner.InputRequest) (string, error) {
		asked = append(asked, r)
		return "Ada", nil
	}
	x, err := f.m.Execute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "password Name?", Input: input}, nil)
	if err != nil || x.Status != runner.StatusOK {
		t.Fatalf("Execute: %+v, %v", x, err)
	}
	if want := []runner.InputRequest{{Prompt: "Name?", Password: true}}; !reflect.DeepEqual(asked, want) {
		t.Errorf("input asked %+v, want %+v", asked, want)
	}
	x, err = f.m.Execute(t.Context(), "", info.ID, kernels.ExecuteOptions{Code: "input Name?"}, nil)
	if err != nil || x.Status != runner.StatusError || x.Error == nil || x.Error.Name != "StdinNotImplementedError" {
		t.Errorf("Execute without input: %+v, %v; want StdinNotImplementedError", x, err)
	}
}
