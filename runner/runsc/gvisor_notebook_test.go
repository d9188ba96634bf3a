package runsc_test

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner"
)

// What a notebook front end needs of a kernel, in a real gVisor sandbox:
// completion, inspection, the completeness check, input and the display
// events.

// cellEvents collects a cell's events.
type cellEvents struct {
	mu     sync.Mutex
	events []runner.Event
}

func (c *cellEvents) add(e runner.Event) {
	c.mu.Lock()
	c.events = append(c.events, e)
	c.mu.Unlock()
}

func (c *cellEvents) stdout() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, e := range c.events {
		if e.Type == runner.EventStream && e.Stream == runner.Stdout {
			b.WriteString(e.Text)
		}
	}
	return b.String()
}

func execCell(t *testing.T, k runner.Kernel, req runner.ExecuteRequest) (runner.ExecuteResult, *cellEvents) {
	t.Helper()
	if req.Timeout == 0 {
		req.Timeout = time.Minute // a safety net
	}
	ev := &cellEvents{}
	res, err := k.Execute(t.Context(), req, ev.add)
	if err != nil {
		t.Fatalf("%q: %v", req.Code, err)
	}
	return res, ev
}

func TestGVisorNotebook(t *testing.T) {
	e := newRealEnv(t)
	tests := []struct {
		lang       string
		setup      string
		complete   string // completed at its end
		wantMatch  string
		inspect    string // inspected at its end
		wantDoc    string
		incomplete string
		wantIndent string
		readCode   string // reads a line and prints "got <line>"
		waitCode   string // waits for input forever
	}{
		{lang: "python", setup: "import os\ndef add(a, b=2):\n    'Add things.'\n    return a + b",
			complete: "import o", wantMatch: "os", inspect: "add(", wantDoc: "Signature: add(a, b=2)\nDocstring: Add things.\nFile: <cell-1>\nType: function",
			incomplete: "for i in x:", wantIndent: "    ",
			readCode: "print('got', input('Name? '))", waitCode: "input('wait')"},
		{lang: "node", setup: "const alpha = 1; function add(a, b) { return a + b }",
			complete: "alp", wantMatch: "alpha", inspect: "add(", wantDoc: "Type: function\nSignature: function add(a, b)",
			incomplete: "if (x) {", wantIndent: "  ",
			readCode: "console.log('got', await input('Name? '))", waitCode: "await input('wait')"},
	}
	for _, tt := range tests {
		t.Run(tt.lang, func(t *testing.T) {
			k := e.openKernel(t, tt.lang)
			in := k.(runner.Introspector)
			if res, _ := execCell(t, k, runner.ExecuteRequest{Code: tt.setup}); res.Status != runner.StatusOK {
				t.Fatalf("setup: %+v", res)
			}
			n := len([]rune(tt.complete))
			c, err := in.Complete(t.Context(), tt.complete, n)
			if err != nil || !slices.Contains(c.Matches, tt.wantMatch) || c.CursorEnd != n {
				t.Errorf("Complete(%q) = %+v, %v; want %q among the matches", tt.complete, c, err, tt.wantMatch)
			}
			i, err := in.Inspect(t.Context(), tt.inspect, len(tt.inspect), 0)
			if err != nil || !i.Found || i.Data["text/plain"] != tt.wantDoc {
				t.Errorf("Inspect(%q) = %+v, %v; want %q", tt.inspect, i, err, tt.wantDoc)
			}
			ic, err := in.IsComplete(t.Context(), tt.incomplete)
			if want := (runner.Completeness{Status: runner.CodeIncomplete, Indent: tt.wantIndent}); err != nil || ic != want {
				t.Errorf("IsComplete(%q) = %+v, %v; want %+v", tt.incomplete, ic, err, want)
			}

			// Input round trip.
			var asked []runner.InputRequest
			res, ev := execCell(t, k, runner.ExecuteRequest{Code: tt.readCode, Input: func(ctx context.Context, r runner.InputRequest) (string, error) {
				asked = append(asked, r)
				return "Ada", nil
			}})
			if res.Status != runner.StatusOK || ev.stdout() != "got Ada\n" || !reflect.DeepEqual(asked, []runner.InputRequest{{Prompt: "Name? "}}) {
				t.Errorf("input: %+v, stdout %q, asked %+v", res, ev.stdout(), asked)
			}
			// Refused without an InputFunc.
			res, _ = execCell(t, k, runner.ExecuteRequest{Code: tt.readCode})
			if res.Status != runner.StatusError || res.Error == nil || res.Error.Name != "StdinNotImplementedError" {
				t.Errorf("input without an InputFunc: %+v", res)
			}

			// A cell waiting for input stops at an interrupt...
			waiting := make(chan struct{})
			done := make(chan runner.ExecuteResult, 1)
			go func() {
				res, _ := execCell(t, k, runner.ExecuteRequest{Code: tt.waitCode, Input: func(ctx context.Context, r runner.InputRequest) (string, error) {
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
			if err := k.Interrupt(t.Context()); err != nil {
				t.Fatal(err)
			}
			if res := <-done; res.Status != runner.StatusAborted || res.Reason != runner.ReasonInterrupted {
				t.Errorf("interrupted input: %+v", res)
			}
			// ...and at its timeout.
			start := time.Now()
			res, _ = execCell(t, k, runner.ExecuteRequest{Code: tt.waitCode, Timeout: time.Second, Input: func(ctx context.Context, r runner.InputRequest) (string, error) {
				<-ctx.Done()
				return "", ctx.Err()
			}})
			if res.Status != runner.StatusAborted || res.Reason != runner.ReasonTimeout {
				t.Errorf("input past the timeout: %+v after %s", res, time.Since(start))
			}
			if res, _ := execCell(t, k, runner.ExecuteRequest{Code: "1 + 1"}); res.Status != runner.StatusOK {
				t.Errorf("after the input cells: %+v", res)
			}
		})
	}
}

func TestGVisorDisplayUpdates(t *testing.T) {
	e := newRealEnv(t)
	k := e.openKernel(t, "python")
	res, ev := execCell(t, k, runner.ExecuteRequest{Code: "from IPython.display import display, clear_output\n" +
		"h = display('a', display_id=True)\nh.update('b')\nclear_output(wait=True)"})
	if res.Status != runner.StatusOK || len(ev.events) != 3 {
		t.Fatalf("%+v, events %+v", res, ev.events)
	}
	id := ev.events[0].Transient["display_id"]
	want := []runner.Event{
		{Type: runner.EventDisplayData, Data: map[string]any{"text/plain": "'a'"}, Metadata: map[string]any{}, Transient: map[string]any{"display_id": id}},
		{Type: runner.EventUpdateDisplayData, Data: map[string]any{"text/plain": "'b'"}, Metadata: map[string]any{}, Transient: map[string]any{"display_id": id}},
		{Type: runner.EventClearOutput, Wait: true},
	}
	got, _ := json.Marshal(ev.events)
	wantJSON, _ := json.Marshal(want)
	if string(got) != string(wantJSON) {
		t.Errorf("events\n%s\nwant\n%s", got, wantJSON)
	}
}
