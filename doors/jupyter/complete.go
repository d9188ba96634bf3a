package jupyterdoor

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/paddock-dev/paddock/runner"
)

// introspectTimeout bounds a complete, inspect or is_complete call: they
// answer a keystroke, and a kernel that cannot answer in time is not
// worth waiting for.
const introspectTimeout = 10 * time.Second

// complete answers a complete_request from the live interpreter.
func (k *conn) complete(in inbound) {
	var req struct {
		Code      string `json:"code"`
		CursorPos int    `json:"cursor_pos"`
	}
	_ = json.Unmarshal(in.Content, &req)
	ctx, cancel := context.WithTimeout(context.Background(), introspectTimeout)
	defer cancel()
	c, err := k.d.svc.Complete(ctx, k.caller, k.id, req.Code, req.CursorPos)
	if err != nil {
		k.d.lostIf(k.caller, k.id, err)
		k.reply(in, "complete_reply", coreError(err))
		return
	}
	meta := c.Metadata
	if meta == nil {
		meta = map[string]any{}
	}
	k.reply(in, "complete_reply", map[string]any{"status": "ok", "matches": c.Matches,
		"cursor_start": c.CursorStart, "cursor_end": c.CursorEnd, "metadata": meta})
}

// inspect answers an inspect_request from the live interpreter.
func (k *conn) inspect(in inbound) {
	var req struct {
		Code        string `json:"code"`
		CursorPos   int    `json:"cursor_pos"`
		DetailLevel int    `json:"detail_level"`
	}
	_ = json.Unmarshal(in.Content, &req)
	ctx, cancel := context.WithTimeout(context.Background(), introspectTimeout)
	defer cancel()
	r, err := k.d.svc.Inspect(ctx, k.caller, k.id, req.Code, req.CursorPos, req.DetailLevel)
	if err != nil {
		k.d.lostIf(k.caller, k.id, err)
		k.reply(in, "inspect_reply", coreError(err))
		return
	}
	data, meta := r.Data, r.Metadata
	if data == nil {
		data = map[string]any{}
	}
	if meta == nil {
		meta = map[string]any{}
	}
	k.reply(in, "inspect_reply", map[string]any{"status": "ok", "found": r.Found, "data": data, "metadata": meta})
}

// isComplete answers an is_complete_request.
func (k *conn) isComplete(in inbound) {
	var req struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(in.Content, &req)
	ctx, cancel := context.WithTimeout(context.Background(), introspectTimeout)
	defer cancel()
	r, err := k.d.svc.IsComplete(ctx, k.caller, k.id, req.Code)
	if err != nil {
		k.d.lostIf(k.caller, k.id, err)
		k.reply(in, "is_complete_reply", coreError(err))
		return
	}
	content := map[string]any{"status": r.Status}
	if r.Status == runner.CodeIncomplete {
		content["indent"] = r.Indent
	}
	k.reply(in, "is_complete_reply", content)
}

var errConnClosed = errors.New("the client that ran the cell is gone")

// input is the cell's stdin when its execute_request allowed it: each
// read is an input_request to this client, answered by its input_reply.
func (k *conn) input(parent inbound) runner.InputFunc {
	return func(ctx context.Context, req runner.InputRequest) (string, error) {
		ch := make(chan string, 1)
		k.stdinMu.Lock()
		k.stdin = ch
		k.stdinMu.Unlock()
		defer func() {
			k.stdinMu.Lock()
			k.stdin = nil
			k.stdinMu.Unlock()
		}()
		k.send(message("stdin", "input_request", k.hub.kernelSession(), parent.RawHeader,
			map[string]any{"prompt": req.Prompt, "password": req.Password}))
		select {
		case v := <-ch:
			return v, nil
		case <-k.done:
			return "", errConnClosed
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// deliverInput hands an input_reply to the cell waiting for it, if any.
func (k *conn) deliverInput(in inbound) {
	var rep struct {
		Value string `json:"value"`
	}
	_ = json.Unmarshal(in.Content, &rep)
	k.stdinMu.Lock()
	ch := k.stdin
	k.stdinMu.Unlock()
	if ch != nil {
		select {
		case ch <- rep.Value:
		default:
		}
	}
}
