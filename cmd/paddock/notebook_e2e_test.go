package main

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/runner"
)

// What a notebook door asks of the server's core, end to end in real
// gVisor sandboxes: completion, inspection, the completeness check, input
// and the display events, in the caller's own session.

// notebookCaller is the anonymous caller of a server without auth, as the
// notebook door sees it.
var notebookCaller = core.Caller{Door: "jupyter"}

// cellOut collects a cell's events.
type cellOut struct {
	mu     sync.Mutex
	events []runner.Event
}

func (o *cellOut) add(e runner.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.events = append(o.events, e)
}

// text is the cell's stdout, then its result's text/plain.
func (o *cellOut) text() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var b strings.Builder
	for _, e := range o.events {
		switch e.Type {
		case runner.EventStream:
			b.WriteString(e.Text)
		case runner.EventExecuteResult:
			b.WriteString(e.Data["text/plain"].(string))
		}
	}
	return b.String()
}

func (e *e2e) cell(t *testing.T, id string, in core.ExecuteInput) (runner.ExecuteResult, string) {
	t.Helper()
	var out cellOut
	x, err := e.st.Core.Execute(t.Context(), notebookCaller, id, in, out.add)
	if err != nil {
		t.Fatalf("%q: %v", in.Code, err)
	}
	return x.ExecuteResult, out.text()
}

func TestE2ENotebook(t *testing.T) {
	e := newE2E(t)
	svc := e.st.Core
	tests := []struct {
		lang                string
		setup, check, want  string
		complete, wantMatch string
		inspect, wantDoc    string
		incomplete, indent  string
		read, wait          string
	}{
		{lang: "python", setup: "x = 41\ndef add(a, b=2):\n    'Add things.'\n    return a + b", check: "x + 1", want: "42",
			complete: "import o", wantMatch: "os", inspect: "add(", wantDoc: "Signature: add(a, b=2)\nDocstring: Add things.\nFile: <cell-1>\nType: function",
			incomplete: "while True:", indent: "    ", read: "print('hello', input('Name? '))", wait: "input('wait')"},
		{lang: "node", setup: "const x = 41; function add(a, b) { return a + b }", check: "x + 1", want: "42",
			complete: "ad", wantMatch: "add", inspect: "add(", wantDoc: "Type: function\nSignature: function add(a, b)",
			incomplete: "while (true) {", indent: "  ", read: "console.log('hello', await input('Name? '))", wait: "await input('wait')"},
	}
	for _, tt := range tests {
		t.Run(tt.lang, func(t *testing.T) {
			id := e.newSession(t, map[string]any{"language": tt.lang})
			if res, _ := e.cell(t, id, core.ExecuteInput{Code: tt.setup}); res.Status != runner.StatusOK {
				t.Fatalf("setup: %+v", res)
			}
			c, err := svc.Complete(t.Context(), notebookCaller, id, tt.complete, len(tt.complete))
			if err != nil || !slices.Contains(c.Matches, tt.wantMatch) {
				t.Errorf("Complete(%q) = %+v, %v; want %q", tt.complete, c, err, tt.wantMatch)
			}
			i, err := svc.Inspect(t.Context(), notebookCaller, id, tt.inspect, len(tt.inspect), 0)
			if err != nil || !i.Found || i.Data["text/plain"] != tt.wantDoc {
				t.Errorf("Inspect(%q) = %+v, %v; want %q", tt.inspect, i, err, tt.wantDoc)
			}
			ic, err := svc.IsComplete(t.Context(), notebookCaller, id, tt.incomplete)
			if want := (runner.Completeness{Status: runner.CodeIncomplete, Indent: tt.indent}); err != nil || ic != want {
				t.Errorf("IsComplete(%q) = %+v, %v; want %+v", tt.incomplete, ic, err, want)
			}
			_, err = svc.Complete(t.Context(), notebookCaller, id, "x", 2)
			var ce *core.Error
			if !errors.As(err, &ce) || ce.Kind != core.KindInvalid {
				t.Errorf("a cursor past the code: %v, want KindInvalid", err)
			}

			// Input round trip.
			prompts := make(chan runner.InputRequest, 1)
			res, out := e.cell(t, id, core.ExecuteInput{Code: tt.read, Input: func(ctx context.Context, r runner.InputRequest) (string, error) {
				prompts <- r
				return "Grace", nil
			}})
			if res.Status != runner.StatusOK || out != "hello Grace\n" {
				t.Errorf("input: %+v, output %q", res, out)
			}
			if r := <-prompts; r != (runner.InputRequest{Prompt: "Name? "}) {
				t.Errorf("input request %+v", r)
			}

			// A cell waiting for input is interrupted, and the state lives.
			waiting := make(chan struct{})
			done := make(chan runner.ExecuteResult, 1)
			go func() {
				res, _ := e.cell(t, id, core.ExecuteInput{Code: tt.wait, Input: func(ctx context.Context, r runner.InputRequest) (string, error) {
					close(waiting)
					<-ctx.Done()
					return "", ctx.Err()
				}})
				done <- res
			}()
			select {
			case <-waiting:
			case res := <-done:
				t.Fatalf("the cell ended without asking for input: %+v", res)
			}
			if err := svc.Interrupt(t.Context(), notebookCaller, id); err != nil {
				t.Fatal(err)
			}
			if res := <-done; res.Reason != runner.ReasonInterrupted {
				t.Errorf("interrupted input: %+v", res)
			}
			// Its timeout still holds.
			res, _ = e.cell(t, id, core.ExecuteInput{Code: tt.wait, Timeout: time.Second, Input: func(ctx context.Context, r runner.InputRequest) (string, error) {
				<-ctx.Done()
				return "", ctx.Err()
			}})
			if res.Reason != runner.ReasonTimeout {
				t.Errorf("input past the timeout: %+v", res)
			}
			if res, out := e.cell(t, id, core.ExecuteInput{Code: tt.check}); res.Status != runner.StatusOK || out != tt.want {
				t.Errorf("%q after the input cells: %+v, %q; want %q", tt.check, res, out, tt.want)
			}
		})
	}

	t.Run("display updates", func(t *testing.T) {
		id := e.newSession(t, map[string]any{"language": "python"})
		var out cellOut
		x, err := svc.Execute(t.Context(), notebookCaller, id, core.ExecuteInput{Code: "from IPython.display import display, clear_output\n" +
			"h = display('a', display_id=True)\nh.update('b')\nclear_output(wait=True)"}, out.add)
		if err != nil || x.Status != runner.StatusOK {
			t.Fatalf("%+v, %v", x, err)
		}
		var types []runner.EventType
		for _, ev := range out.events {
			types = append(types, ev.Type)
		}
		want := []runner.EventType{runner.EventDisplayData, runner.EventUpdateDisplayData, runner.EventClearOutput}
		if !slices.Equal(types, want) || out.events[0].Transient["display_id"] != out.events[1].Transient["display_id"] || !out.events[2].Wait {
			t.Errorf("events %+v", out.events)
		}
	})
}
