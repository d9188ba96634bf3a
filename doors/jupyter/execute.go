package jupyterdoor

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/runner"
)

// executeRequest is an execute_request's content.
type executeRequest struct {
	Code         string `json:"code"`
	Silent       bool   `json:"silent"`
	AllowStdin   *bool  `json:"allow_stdin"`
	StopOnError  *bool  `json:"stop_on_error"`
	StoreHistory *bool  `json:"store_history"`
}

// execute runs a cell: execute_input, the cell's output on iopub (to
// every client of the kernel), then execute_reply to this client. It
// returns the Seq through which queued execute requests are to be aborted:
// when the cell failed and asked to stop on error, those received before
// its reply went out (none the client sends after it); else 0.
func (k *conn) execute(in inbound) (abortThrough int64) {
	var req executeRequest
	if err := json.Unmarshal(in.Content, &req); err != nil {
		k.reply(in, "execute_reply", errorContent("BadRequest", "execute_request content is not valid JSON"))
		return 0
	}
	stopOnError := req.StopOnError == nil || *req.StopOnError
	d := k.d
	s, err := d.svc.Session(k.caller, k.id)
	if err != nil {
		return k.executeFailed(in, err, stopOnError)
	}
	count := s.ExecutionCount + 1
	if strings.TrimSpace(req.Code) == "" {
		k.reply(in, "execute_reply", map[string]any{"status": "ok", "execution_count": s.ExecutionCount,
			"user_expressions": map[string]any{}, "payload": []any{}})
		return 0
	}
	if err := d.svc.Admit(k.caller); err != nil {
		return k.executeFailed(in, err, stopOnError)
	}
	if !req.Silent {
		k.hub.iopub("execute_input", in.RawHeader, map[string]any{"code": req.Code, "execution_count": count})
	}
	events := func(ev runner.Event) {
		if typ, content := eventMessage(ev, count); typ != "" && !req.Silent {
			k.hub.iopub(typ, in.RawHeader, content)
		}
	}
	// A notebook's cell may run as long as the server lets any cell run.
	in2 := core.ExecuteInput{Code: req.Code, Queue: true, Timeout: d.svc.Config().MaxTimeout}
	if req.AllowStdin == nil || *req.AllowStdin {
		in2.Input = k.input(in)
	}
	// The cell runs on even if this client goes away, as a kernel's does,
	// up to its time limit.
	running := k.hub.begin()
	x, err := d.svc.Execute(context.Background(), k.caller, k.id, in2, events)
	k.hub.end(running)
	if err != nil {
		return k.executeFailed(in, err, stopOnError)
	}
	if x.StateLost && x.Restarted {
		k.hub.renew() // the cell's error, reply and idle speak for the fresh kernel (restarted.go)
	}
	reply := map[string]any{"status": "ok", "execution_count": x.ExecutionCount,
		"user_expressions": map[string]any{}, "payload": []any{}}
	switch {
	case x.StateLost && x.Status != runner.StatusOK:
		ename, evalue := restartedAs(x.LostReason, x.Restarted)
		if !req.Silent {
			k.hub.iopub("error", in.RawHeader, map[string]any{"ename": ename, "evalue": evalue, "traceback": []string{ename + ": " + evalue}})
		}
		reply["status"], reply["ename"], reply["evalue"], reply["traceback"] = "error", ename, evalue, []string{ename + ": " + evalue}
	case x.Status == runner.StatusError && x.Error != nil:
		reply["status"], reply["ename"], reply["evalue"], reply["traceback"] = "error", x.Error.Name, x.Error.Value, x.Error.Traceback
	case x.Status != runner.StatusOK:
		ename, evalue := abortedAs(s.Language, x.Reason)
		if !req.Silent {
			k.hub.iopub("error", in.RawHeader, map[string]any{"ename": ename, "evalue": evalue, "traceback": []string{ename + ": " + evalue}})
		}
		reply["status"], reply["ename"], reply["evalue"], reply["traceback"] = "error", ename, evalue, []string{ename + ": " + evalue}
	}
	if reply["status"] != "ok" && stopOnError {
		abortThrough = k.shellSeq.Load()
	}
	if x.StateLost {
		k.afterIdle = func() { k.hub.restarted(k.d.hubs, in.RawHeader, x.Restarted) }
	}
	k.reply(in, "execute_reply", reply)
	return abortThrough
}

// executeFailed answers an execute_request the core refused or could not
// run: an error on iopub (so a notebook shows it) and an error reply.
func (k *conn) executeFailed(in inbound, err error, stopOnError bool) (abortThrough int64) {
	k.d.lostIf(k.caller, k.id, err)
	content := coreError(err)
	k.hub.iopub("error", in.RawHeader, map[string]any{"ename": content["ename"], "evalue": content["evalue"], "traceback": content["traceback"]})
	content["execution_count"] = nil
	content["user_expressions"] = map[string]any{}
	content["payload"] = []any{}
	if stopOnError {
		abortThrough = k.shellSeq.Load()
	}
	k.reply(in, "execute_reply", content)
	return abortThrough
}

// abortedAs names a cell that ended without finishing, the way the
// language's own kernel would.
func abortedAs(language string, r runner.Reason) (ename, evalue string) {
	switch r {
	case runner.ReasonInterrupted:
		if language == "python" {
			return "KeyboardInterrupt", "" // str(KeyboardInterrupt()), as ipykernel shows it
		}
		return "Interrupted", "the cell was interrupted"
	case runner.ReasonTimeout:
		return "TimeoutError", "the cell reached its time limit and was interrupted"
	case runner.ReasonOutputLimit:
		return "OutputLimitExceeded", "the cell printed more than the server's output limit and was interrupted"
	case runner.ReasonOOM:
		return "MemoryError", "the kernel ran out of memory and died"
	case runner.ReasonKernelLost:
		return "DeadKernelError", "the kernel died; its state is gone (start a new one)"
	}
	return "Aborted", "the cell ended early (" + string(r) + ")"
}

// eventMessage is the iopub message of a cell's output event: its type
// and content ("" for an event Jupyter has no message for).
func eventMessage(ev runner.Event, count int) (string, map[string]any) {
	obj := func(m map[string]any) map[string]any {
		if m == nil {
			return map[string]any{}
		}
		return m
	}
	switch ev.Type {
	case runner.EventStream:
		return "stream", map[string]any{"name": string(ev.Stream), "text": ev.Text}
	case runner.EventDisplayData:
		return "display_data", map[string]any{"data": obj(ev.Data), "metadata": obj(ev.Metadata), "transient": obj(ev.Transient)}
	case runner.EventUpdateDisplayData:
		return "update_display_data", map[string]any{"data": obj(ev.Data), "metadata": obj(ev.Metadata), "transient": obj(ev.Transient)}
	case runner.EventClearOutput:
		return "clear_output", map[string]any{"wait": ev.Wait}
	case runner.EventExecuteResult:
		n := ev.ExecutionCount
		if n == 0 {
			n = count
		}
		return "execute_result", map[string]any{"execution_count": n, "data": obj(ev.Data), "metadata": obj(ev.Metadata)}
	case runner.EventError:
		if ev.Error == nil {
			return "", nil
		}
		tb := ev.Error.Traceback
		if tb == nil {
			tb = []string{}
		}
		return "error", map[string]any{"ename": ev.Error.Name, "evalue": ev.Error.Value, "traceback": tb}
	}
	return "", nil
}
