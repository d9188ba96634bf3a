package e2bdoor

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/runner"
)

// mimeKeys are the code interpreter's result keys for MIME types; a type
// not listed keeps its MIME name, which the SDK files under Result.extra.
var mimeKeys = map[string]string{
	"text/plain":             "text",
	"text/html":              "html",
	"text/markdown":          "markdown",
	"image/svg+xml":          "svg",
	"image/png":              "png",
	"image/jpeg":             "jpeg",
	"application/pdf":        "pdf",
	"text/latex":             "latex",
	"application/json":       "json",
	"application/javascript": "javascript",
}

type executeRequest struct {
	Code      string            `json:"code"`
	ContextID string            `json:"context_id"`
	Language  string            `json:"language"`
	EnvVars   map[string]string `json:"env_vars"`
}

// execute is POST /execute: one cell in a context, streamed as NDJSON
// lines flushed one by one. Errors before the first line are statuses
// (404 NotFoundError, 502 TimeoutError…); after it, an error line.
func (d *door) execute(c *gin.Context) {
	var req executeRequest
	if err := d.readJSON(c, &req); err != nil {
		fail(c, err)
		return
	}
	sb := sandboxOf(c)
	cc, err := d.cellContext(c, sb, req)
	if err != nil {
		fail(c, err)
		return
	}
	w := &ndjson{c: c}
	x, err := d.core.Execute(c.Request.Context(), sb.owner, cc.ID, core.ExecuteInput{Code: req.Code, Env: req.EnvVars}, w.event)
	d.touch(sb, cc.ID)
	if err != nil {
		if !w.begun() {
			fail(c, err)
			return
		}
		e := classify(err)
		w.line(errorLine{Type: "error", Name: "SandboxError", Value: e.Message, Traceback: ""})
		w.line(map[string]string{"type": "end_of_execution"})
		return
	}
	switch {
	case x.StateLost && !w.sawError():
		name, value := restartOf(x.LostReason, x.Restarted)
		w.line(errorLine{Type: "error", Name: name, Value: value})
	case x.Status == runner.StatusAborted && !w.sawError():
		name, value := abortOf(x.Reason, x.Exec)
		w.line(errorLine{Type: "error", Name: name, Value: value})
	}
	w.line(map[string]any{"type": "number_of_executions", "execution_count": x.ExecutionCount})
	w.line(map[string]string{"type": "end_of_execution"})
}

// cellContext picks the context a cell runs in: the one named, else the
// language's default, else the sandbox's main context.
func (d *door) cellContext(c *gin.Context, sb *sandbox, req executeRequest) (codeContext, error) {
	switch {
	case req.ContextID != "" && req.Language != "":
		return codeContext{}, invalid("give context_id or language, not both")
	case req.ContextID != "":
		cc, ok := sb.context(req.ContextID)
		if !ok {
			return codeContext{}, notFound("context " + req.ContextID + " not found")
		}
		return cc, nil
	case req.Language != "":
		return d.defaultContext(c, sb, req.Language)
	}
	cc, _ := sb.context(sb.id)
	return cc, nil
}

// abortOf names a cell that ended without raising.
func abortOf(r runner.Reason, exec time.Duration) (name, value string) {
	switch r {
	case runner.ReasonTimeout:
		return "TimeoutError", fmt.Sprintf("the cell was stopped at its time limit (after %s)", exec.Round(time.Millisecond))
	case runner.ReasonOutputLimit:
		return "OutputLimitError", "the cell was stopped: its output passed the server's cap"
	case runner.ReasonInterrupted:
		return "KeyboardInterrupt", "the cell was interrupted"
	}
	return "ExecutionAborted", "the cell was aborted (" + string(r) + ")"
}

// restartOf names a cell whose context's kernel died or was killed (why
// says how), with it or just before it: the context goes on with a fresh
// kernel, or, when none could be had, is lost.
func restartOf(why string, restarted bool) (name, value string) {
	if restarted {
		return "KernelRestarted", "Kernel was restarted: " + why + "; the context's variables, imports and files are gone"
	}
	return "KernelLost", "Kernel was lost: " + why + "; create a new sandbox"
}

type outputLine struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	Timestamp string `json:"timestamp"`
}

type errorLine struct {
	Type      string `json:"type"`
	Name      string `json:"name"`
	Value     string `json:"value"`
	Traceback string `json:"traceback"`
}

// ndjson writes one JSON value per line and flushes it; the 200 status
// goes with the first line.
type ndjson struct {
	c      *gin.Context
	mu     sync.Mutex
	n      int
	errors int
}

func (w *ndjson) begun() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n > 0
}

func (w *ndjson) sawError() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.errors > 0
}

func (w *ndjson) line(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(errorLine{Type: "error", Name: "SandboxError", Value: "an output could not be encoded"})
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == 0 {
		w.c.Header("Content-Type", "application/x-ndjson")
		w.c.Status(http.StatusOK)
	}
	w.n++
	_, _ = w.c.Writer.Write(append(b, '\n'))
	w.c.Writer.Flush()
}

// event translates one kernel event into its NDJSON line.
func (w *ndjson) event(e runner.Event) {
	switch e.Type {
	case runner.EventStream:
		w.line(outputLine{Type: string(e.Stream), Text: e.Text, Timestamp: time.Now().UTC().Format(time.RFC3339Nano)})
	case runner.EventDisplayData, runner.EventExecuteResult:
		w.line(resultLine(e))
	case runner.EventError:
		if e.Error == nil {
			return
		}
		w.mu.Lock()
		w.errors++
		w.mu.Unlock()
		w.line(errorLine{Type: "error", Name: e.Error.Name, Value: e.Error.Value, Traceback: strings.Join(e.Error.Traceback, "\n")})
	}
}

// resultLine flattens a MIME bundle into a result line; is_main_result
// marks the cell's value, as against display output.
func resultLine(e runner.Event) map[string]any {
	m := make(map[string]any, len(e.Data)+2)
	for mime, v := range e.Data {
		key, ok := mimeKeys[mime]
		if !ok {
			key = mime
		}
		m[key] = v
	}
	m["type"] = "result"
	m["is_main_result"] = e.Type == runner.EventExecuteResult
	return m
}
