package api

import (
	"cmp"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/runner"
)

// executeResponse is the body of a completed execution, and the end event
// of a streamed one.
type executeResponse struct {
	ExecutionCount int          `json:"execution_count"`
	Stdout         string       `json:"stdout"`
	Stderr         string       `json:"stderr"`
	Results        []resultItem `json:"results"`
	Error          *execError   `json:"error"`
	Status         string       `json:"status"`
	Reason         string       `json:"reason"`
	Message        string       `json:"message,omitempty"` // why a stream ended early
	// StateLost says the session's state is gone: its kernel died or was
	// killed with this cell, or between the last cell and this one.
	// StateLostReason says how; KernelRestarted that the session goes on
	// with a fresh kernel (false: the session is lost).
	StateLost       bool   `json:"state_lost,omitempty"`
	StateLostReason string `json:"state_lost_reason,omitempty"`
	KernelRestarted bool   `json:"kernel_restarted,omitempty"`
	// Resumed says the session was hibernated and woken for this cell
	// (timing.resume_ms says how long that took).
	Resumed bool `json:"resumed,omitempty"`
	// Warm and Start say how the session's sandbox was made, as in the
	// session's description: an execute never makes one.
	Warm   bool           `json:"warm"`
	Start  core.StartKind `json:"start"`
	Timing timingResponse `json:"timing"`
}

// resultItem is one rich output: display_data (Main false) or the cell's
// execute_result (Main true).
type resultItem struct {
	Data     map[string]any `json:"data"`
	Metadata map[string]any `json:"metadata"`
	Main     bool           `json:"main"`
}

type execError struct {
	Name      string   `json:"name"`
	Value     string   `json:"value"`
	Traceback []string `json:"traceback"`
}

// execute serves POST /v1/sessions/{id}/execute: one cell, answered as
// one JSON object, or streamed as NDJSON or SSE when Accept asks for it.
func (s *server) execute(c *gin.Context) {
	begin := time.Now()
	id := sessionID(c)
	body, err := s.readBody(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	var req executeRequest
	if err := decodeJSON(body, &req); err != nil {
		s.writeError(c, err)
		return
	}
	if req.Code == nil { // the core knows only empty code
		s.writeError(c, invalid("invalid_request", "code is required"))
		return
	}
	in := core.ExecuteInput{Code: *req.Code, Timeout: core.Scaled(req.TimeoutMS, time.Millisecond), Env: req.Env, Queue: req.Queue}
	if format := streamFormat(c.GetHeader("Accept")); format != "" {
		s.executeStream(c, id, in, format, begin)
		return
	}
	var out cellOutput
	res, err := s.core.Execute(c.Request.Context(), caller(c), id, in, out.add)
	if err != nil {
		s.writeError(c, err)
		return
	}
	c.Set(keyTemplate, res.Template)
	writeJSON(c, http.StatusOK, out.response(res, time.Since(begin)))
}

// Stream formats chosen by the Accept header.
const (
	formatNDJSON = "application/x-ndjson"
	formatSSE    = "text/event-stream"
)

// streamFormat returns the first streaming media type accept names, or ""
// for a plain JSON answer.
func streamFormat(accept string) string {
	for part := range strings.SplitSeq(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err == nil && (mt == formatNDJSON || mt == formatSSE) {
			return mt
		}
	}
	return ""
}

// cellOutput gathers a cell's events into its summary.
type cellOutput struct {
	stdout, stderr strings.Builder
	results        []resultItem
	err            *runner.ExecError
}

func (o *cellOutput) add(e runner.Event) {
	switch e.Type {
	case runner.EventStream:
		if e.Stream == runner.Stderr {
			o.stderr.WriteString(e.Text)
		} else {
			o.stdout.WriteString(e.Text)
		}
	case runner.EventDisplayData, runner.EventExecuteResult:
		o.results = append(o.results, resultItem{Data: orEmpty(e.Data), Metadata: orEmpty(e.Metadata),
			Main: e.Type == runner.EventExecuteResult})
	case runner.EventError:
		o.err = e.Error
	}
}

// response is the cell's summary. Its timing has the same phases as a
// run's: queue is the wait for the session's turn, and acquire and start
// are zero because the session already holds its sandbox.
func (o *cellOutput) response(res core.Execution, total time.Duration) executeResponse {
	r := executeResponse{
		ExecutionCount:  res.ExecutionCount,
		Stdout:          o.stdout.String(),
		Stderr:          o.stderr.String(),
		Results:         o.results,
		Status:          res.Status,
		Reason:          string(res.Reason),
		StateLost:       res.StateLost,
		StateLostReason: res.LostReason,
		KernelRestarted: res.Restarted,
		Resumed:         res.Wake.Resumed,
		Warm:            res.Start == core.StartPool || res.Start == core.StartKernel,
		Start:           res.Start,
		Timing: timingResponse{
			QueueMS:  millis(res.Queue),
			ExecMS:   millis(res.Exec),
			TotalMS:  millis(total),
			ResumeMS: millis(res.Wake.Took),
		},
	}
	if r.Results == nil {
		r.Results = []resultItem{}
	}
	if e := cmp.Or(res.Error, o.err); e != nil {
		r.Error = newExecError(e)
	}
	return r
}

func newExecError(e *runner.ExecError) *execError {
	tb := e.Traceback
	if tb == nil {
		tb = []string{}
	}
	return &execError{Name: e.Name, Value: e.Value, Traceback: tb}
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}
