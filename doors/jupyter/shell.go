package jupyterdoor

import (
	"context"
	"encoding/json"
	"path"

	"github.com/paddock-dev/paddock/core"
)

// serveShell answers this connection's shell requests in order, as a
// kernel does. Requests left when the connection ends are dropped.
func (k *conn) serveShell() {
	var abortThrough int64 // execute requests up to this Seq are aborted (a cell failed with stop_on_error)
	for {
		select {
		case <-k.done:
			return
		case in := <-k.shell:
			if in.Header.MsgType == "execute_request" && in.Seq <= abortThrough {
				k.busy(in, func() { k.reply(in, "execute_reply", map[string]any{"status": "aborted"}) })
				continue
			}
			k.busy(in, func() {
				if n := k.shellRequest(in); n > 0 {
					abortThrough = n
				}
			})
		}
	}
}

// busy runs fn between iopub status busy and idle, parented on in.
func (k *conn) busy(in inbound, fn func()) {
	k.hub.status("busy", in.RawHeader)
	fn()
	k.hub.status("idle", in.RawHeader)
	if after := k.afterIdle; after != nil {
		k.afterIdle = nil
		after()
	}
}

// shellRequest answers one shell request. It returns the Seq through
// which queued execute requests are to be aborted, or 0 (see execute).
func (k *conn) shellRequest(in inbound) (abortThrough int64) {
	switch in.Header.MsgType {
	case "kernel_info_request":
		k.reply(in, "kernel_info_reply", k.d.kernelInfo(k.caller, k.id))
	case "execute_request":
		return k.execute(in)
	case "complete_request":
		k.complete(in)
	case "inspect_request":
		k.inspect(in)
	case "is_complete_request":
		k.isComplete(in)
	case "comm_info_request":
		k.reply(in, "comm_info_reply", map[string]any{"status": "ok", "comms": map[string]any{}})
	case "history_request":
		k.history(in)
	case "comm_open":
		// No comm targets: close it, as a kernel without the target does.
		var c struct {
			CommID string `json:"comm_id"`
		}
		_ = json.Unmarshal(in.Content, &c)
		k.hub.iopub("comm_close", in.RawHeader, map[string]any{"comm_id": c.CommID, "data": map[string]any{}})
	case "comm_msg", "comm_close":
	default:
		k.reply(in, replyType(in.Header.MsgType), errorContent("NotImplemented", in.Header.MsgType+" is not supported by Paddock's kernels"))
	}
	return 0
}

// kernelInfo is a kernel_info_reply's content for the caller's kernel id.
func (d *door) kernelInfo(cl core.Caller, id string) map[string]any {
	lang := "python"
	if s, err := d.svc.Session(cl, id); err == nil {
		lang = s.Language
	}
	t := d.templateOf(lang)
	li := infoOf(t)
	return map[string]any{
		"status":                 "ok",
		"protocol_version":       protocolVersion,
		"implementation":         "paddock",
		"implementation_version": "1",
		"language_info": map[string]any{
			"name":               li.Language,
			"version":            li.Version,
			"mimetype":           li.Mimetype,
			"file_extension":     li.Extension,
			"pygments_lexer":     li.Pygments,
			"codemirror_mode":    li.Language,
			"nbconvert_exporter": li.Language,
		},
		"banner":     li.DisplayName + ": " + t.Description,
		"help_links": []any{},
		"debugger":   false,
	}
}

// history answers a history_request from the session's recorded cells:
// tail n, a range (all of this kernel's cells) or a glob search.
func (k *conn) history(in inbound) {
	var req struct {
		Access  string `json:"hist_access_type"`
		N       int    `json:"n"`
		Pattern string `json:"pattern"`
		Unique  bool   `json:"unique"`
	}
	_ = json.Unmarshal(in.Content, &req)
	cells, err := k.d.svc.History(k.caller, k.id)
	if err != nil {
		k.d.lostIf(k.caller, k.id, err)
		k.reply(in, "history_reply", coreError(err))
		return
	}
	if req.Access == "search" && req.Pattern != "" {
		var kept []core.Cell
		seen := map[string]bool{}
		for _, c := range cells {
			if ok, _ := path.Match(req.Pattern, c.Code); ok && !(req.Unique && seen[c.Code]) {
				seen[c.Code] = true
				kept = append(kept, c)
			}
		}
		cells = kept
	}
	if (req.Access == "tail" || req.Access == "search") && req.N > 0 && len(cells) > req.N {
		cells = cells[len(cells)-req.N:]
	}
	out := make([][]any, 0, len(cells))
	for _, c := range cells {
		out = append(out, []any{0, c.Count, c.Code})
	}
	k.reply(in, "history_reply", map[string]any{"status": "ok", "history": out})
}

// control answers a control request: interrupt, shutdown (and restart).
func (k *conn) control(in inbound) {
	ctx := context.Background()
	k.busy(in, func() {
		switch in.Header.MsgType {
		case "interrupt_request":
			if err := k.d.interrupt(ctx, k.caller, k.id); err != nil {
				k.reply(in, "interrupt_reply", coreError(err))
				return
			}
			k.reply(in, "interrupt_reply", map[string]any{"status": "ok"})
		case "shutdown_request":
			k.shutdown(ctx, in)
		default:
			k.reply(in, replyType(in.Header.MsgType), errorContent("NotImplemented", in.Header.MsgType+" is not supported by Paddock's kernels"))
		}
	})
}

func (k *conn) shutdown(ctx context.Context, in inbound) {
	var req struct {
		Restart bool `json:"restart"`
	}
	_ = json.Unmarshal(in.Content, &req)
	if req.Restart {
		if _, err := k.d.restart(ctx, k.caller, k.id, in.RawHeader, true); err != nil {
			k.reply(in, "shutdown_reply", coreError(err))
			return
		}
		k.reply(in, "shutdown_reply", map[string]any{"status": "ok", "restart": true})
		return
	}
	if err := k.d.svc.CloseSession(ctx, k.caller, k.id); err != nil {
		k.d.lostIf(k.caller, k.id, err)
		k.reply(in, "shutdown_reply", coreError(err))
		return
	}
	k.d.sessions.dropKernel(k.id)
	k.reply(in, "shutdown_reply", map[string]any{"status": "ok", "restart": false})
	k.d.hubs.ended(k.caller.Tenant, k.id)
}
