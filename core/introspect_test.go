package core_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/runner"
)

func TestIntrospect(t *testing.T) {
	f := newFixture(t, core.Config{Auth: core.Auth{HS256Secret: secret}})
	alice, err := f.svc.Authenticate(peer, token(t, "alice", "sessions"), "jupyter")
	if err != nil {
		t.Fatal(err)
	}
	bob, err := f.svc.Authenticate(peer, token(t, "bob", "sessions"), "jupyter")
	if err != nil {
		t.Fatal(err)
	}
	runOnly, err := f.svc.Authenticate(peer, token(t, "alice", "run"), "jupyter")
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.svc.CreateSession(t.Context(), alice, core.SessionInput{Language: "python"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Execute(t.Context(), alice, s.ID, core.ExecuteInput{Code: "total = 3"}, nil); err != nil {
		t.Fatal(err)
	}
	c, err := f.svc.Complete(t.Context(), alice, s.ID, "tot", 3)
	if want := (runner.Completion{Matches: []string{"total"}, CursorStart: 0, CursorEnd: 3}); err != nil || !reflect.DeepEqual(c, want) {
		t.Errorf("Complete = %+v, %v; want %+v", c, err, want)
	}
	c, err = f.svc.Complete(t.Context(), alice, s.ID, "zzz", 3)
	if err != nil || c.Matches == nil || len(c.Matches) != 0 {
		t.Errorf("Complete with no match = %#v, %v; want an empty list", c.Matches, err)
	}
	i, err := f.svc.Inspect(t.Context(), alice, s.ID, "total", 5, 1)
	if want := (runner.Inspection{Found: true, Data: map[string]any{"text/plain": "3"}, Metadata: map[string]any{}}); err != nil || !reflect.DeepEqual(i, want) {
		t.Errorf("Inspect = %+v, %v; want %+v", i, err, want)
	}
	ic, err := f.svc.IsComplete(t.Context(), alice, s.ID, "def f():")
	if want := (runner.Completeness{Status: runner.CodeIncomplete, Indent: "    "}); err != nil || ic != want {
		t.Errorf("IsComplete = %+v, %v; want %+v", ic, err, want)
	}
	if n := calls(t, f.svc, "jupyter", "complete", "ok"); n != 2 {
		t.Errorf("complete calls ok = %v, want 2", n)
	}

	refusals := []struct {
		name string
		call func() error
		kind core.Kind
		code string
		msg  string
	}{
		{"another tenant", func() error { _, err := f.svc.Complete(t.Context(), bob, s.ID, "t", 1); return err },
			core.KindNotFound, "session_not_found", "no such session (it may have expired or been deleted)"},
		{"no sessions scope", func() error { _, err := f.svc.IsComplete(t.Context(), runOnly, s.ID, "x"); return err },
			core.KindForbidden, "insufficient_scope", `this token does not grant the "sessions" scope this route needs`},
		// Cursors count code points: "é" is one, of two bytes.
		{"cursor past the end", func() error { _, err := f.svc.Complete(t.Context(), alice, s.ID, "é", 2); return err },
			core.KindInvalid, "invalid_request", "cursor_pos must be between 0 and 1 (the code's length in characters); got 2"},
		{"negative cursor", func() error { _, err := f.svc.Inspect(t.Context(), alice, s.ID, "x", -1, 0); return err },
			core.KindInvalid, "invalid_request", "cursor_pos must be between 0 and 1 (the code's length in characters); got -1"},
		{"detail level", func() error { _, err := f.svc.Inspect(t.Context(), alice, s.ID, "x", 1, 2); return err },
			core.KindInvalid, "invalid_request", "detail_level must be 0 or 1; got 2"},
		{"not UTF-8", func() error { _, err := f.svc.IsComplete(t.Context(), alice, s.ID, "\xff"); return err },
			core.KindInvalid, "invalid_request", "code must be valid UTF-8"},
		{"too large", func() error {
			_, err := f.svc.Complete(t.Context(), alice, s.ID, strings.Repeat("x", core.MaxIntrospectCode+1), 0)
			return err
		}, core.KindTooLarge, "code_too_large", "code must be at most 1048576 bytes for completion, inspection or a completeness check"},
		{"no such session", func() error { _, err := f.svc.Inspect(t.Context(), alice, "nope", "x", 0, 0); return err },
			core.KindNotFound, "session_not_found", "no such session (it may have expired or been deleted)"},
	}
	for _, tt := range refusals {
		if e := checkErr(t, tt.name, tt.call(), tt.kind, tt.code); e.Message != tt.msg {
			t.Errorf("%s: message %q, want %q", tt.name, e.Message, tt.msg)
		}
	}
}

func TestExecuteInput(t *testing.T) {
	f := newFixture(t, core.Config{})
	c := core.Caller{Door: "jupyter"}
	s, err := f.svc.CreateSession(t.Context(), c, core.SessionInput{Language: "python"})
	if err != nil {
		t.Fatal(err)
	}
	input := func(ctx context.Context, r runner.InputRequest) (string, error) { return "<" + r.Prompt + ">", nil }
	var events []runner.Event
	x, err := f.svc.Execute(t.Context(), c, s.ID, core.ExecuteInput{Code: "input name", Input: input}, func(e runner.Event) { events = append(events, e) })
	if err != nil || x.Status != runner.StatusOK || len(events) != 1 || events[0].Data["text/plain"] != "<name>" {
		t.Errorf("Execute with input = %+v, %v, events %+v", x, err, events)
	}
	x, err = f.svc.Execute(t.Context(), c, s.ID, core.ExecuteInput{Code: "input name"}, nil)
	if err != nil || x.Error == nil || x.Error.Name != "StdinNotImplementedError" ||
		x.Error.Value != "raw_input was called, but this frontend does not support input requests." {
		t.Errorf("Execute without input = %+v, %v", x, err)
	}
}
