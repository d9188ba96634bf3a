package jupyterdoor

import "encoding/json"

// complete answers a complete_request.
func (k *conn) complete(in inbound) {
	var req struct {
		Code      string `json:"code"`
		CursorPos int    `json:"cursor_pos"`
	}
	_ = json.Unmarshal(in.Content, &req)
	k.reply(in, "complete_reply", map[string]any{"status": "ok", "matches": []string{},
		"cursor_start": req.CursorPos, "cursor_end": req.CursorPos, "metadata": map[string]any{}})
}

// inspect answers an inspect_request.
func (k *conn) inspect(in inbound) {
	k.reply(in, "inspect_reply", map[string]any{"status": "ok", "found": false, "data": map[string]any{}, "metadata": map[string]any{}})
}

// isComplete answers an is_complete_request.
func (k *conn) isComplete(in inbound) {
	k.reply(in, "is_complete_reply", map[string]any{"status": "unknown"})
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
