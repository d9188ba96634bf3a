package agentconn

import (
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/wire"
)

var _ runner.Introspector = (*kernel)(nil)

// stdinRefused answers an input request of a cell that may not read
// input, in Jupyter's words (the agent refuses such a read itself first).
const stdinRefused = "raw_input was called, but this frontend does not support input requests."

func (k *kernel) Complete(ctx context.Context, code string, cursorPos int) (runner.Completion, error) {
	a, err := k.ask(ctx, wire.Introspect{Op: wire.OpComplete, Code: code, CursorPos: cursorPos})
	if err != nil {
		return runner.Completion{}, err
	}
	matches := a.Matches
	if matches == nil {
		matches = []string{}
	}
	n := utf8.RuneCountInString(code)
	start, end := min(max(a.CursorStart, 0), n), min(max(a.CursorEnd, 0), n)
	if start > end {
		start = end
	}
	return runner.Completion{Matches: matches, CursorStart: start, CursorEnd: end, Metadata: a.Metadata}, nil
}

func (k *kernel) Inspect(ctx context.Context, code string, cursorPos, detailLevel int) (runner.Inspection, error) {
	a, err := k.ask(ctx, wire.Introspect{Op: wire.OpInspect, Code: code, CursorPos: cursorPos, DetailLevel: detailLevel})
	if err != nil {
		return runner.Inspection{}, err
	}
	if _, ok := a.Data["text/plain"]; !ok {
		a.Found = false
	}
	if !a.Found {
		return runner.Inspection{Found: false, Data: map[string]any{}, Metadata: map[string]any{}}, nil
	}
	return runner.Inspection{Found: true, Data: a.Data, Metadata: orEmpty(a.Metadata)}, nil
}

func (k *kernel) IsComplete(ctx context.Context, code string) (runner.Completeness, error) {
	a, err := k.ask(ctx, wire.Introspect{Op: wire.OpIsComplete, Code: code})
	if err != nil {
		return runner.Completeness{}, err
	}
	switch a.Status {
	case runner.CodeComplete, runner.CodeInvalid, runner.CodeUnknown:
		return runner.Completeness{Status: a.Status}, nil
	case runner.CodeIncomplete:
		return runner.Completeness{Status: a.Status, Indent: a.Indent}, nil
	}
	return runner.Completeness{Status: runner.CodeUnknown}, nil
}

// ask sends the question q and returns the interpreter's answer.
func (k *kernel) ask(ctx context.Context, q wire.Introspect) (*wire.Answer, error) {
	q.ID = k.nextID.Add(1)
	a, err := k.request(ctx, wire.TypeIntrospect, q.ID, q, requestTimeout)
	if err != nil {
		return nil, fmt.Errorf("asking the kernel (%s): %w", q.Op, err)
	}
	if a.Answer == nil {
		return nil, fmt.Errorf("asking the kernel (%s): no answer", q.Op)
	}
	return a.Answer, nil
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// onInput hands the running cell's input request to its InputFunc, on a
// goroutine of its own, and sends the answer back unless the cell ended
// meanwhile.
func (k *kernel) onInput(payload []byte) {
	var r wire.InputRequest
	if json.Unmarshal(payload, &r) != nil {
		return
	}
	k.mu.Lock()
	c := k.cell
	k.mu.Unlock()
	if c == nil || c.id != r.ID {
		return
	}
	if c.input == nil {
		k.replyInput(wire.InputReply{ID: r.ID, Error: stdinRefused})
		return
	}
	go func() {
		v, err := c.input(c.ctx, runner.InputRequest{Prompt: r.Prompt, Password: r.Password})
		if c.ctx.Err() != nil {
			return // the cell is over: nobody reads the answer
		}
		reply := wire.InputReply{ID: r.ID, Value: v}
		switch {
		case err != nil:
			reply.Value, reply.Error = "", err.Error()
			if reply.Error == "" {
				reply.Error = "no input"
			}
		case len(v) > runner.MaxInputBytes:
			reply.Value, reply.Error = "", fmt.Sprintf("an input of %d bytes is over the limit of %d", len(v), runner.MaxInputBytes)
		}
		k.replyInput(reply)
	}()
}

func (k *kernel) replyInput(r wire.InputReply) {
	payload, err := json.Marshal(r)
	if err != nil {
		return
	}
	if err := k.s.w.Write(wire.TypeInputReply, payload); err != nil {
		k.s.log.Debug("sending an input reply", "sandbox_id", k.s.id, "err", err)
	}
}
