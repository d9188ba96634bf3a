package mcpdoor

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddock-dev/paddock/runner"
)

// imageTypes are the MIME types sent to the model as image content.
var imageTypes = []string{"image/png", "image/jpeg"}

// textTypes are the MIME types of a rich output tried, in order, for its
// text when it has no image.
var textTypes = []string{"text/plain", "text/markdown", "application/json", "text/html"}

// cellOutput gathers a cell's events as they arrive.
type cellOutput struct {
	mu       sync.Mutex
	stdout   strings.Builder
	stderr   strings.Builder
	rich     []mcp.Content
	displays []Display
	value    string
	err      *runner.ExecError
}

// add is the events callback of core.Execute.
func (o *cellOutput) add(e runner.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch e.Type {
	case runner.EventStream:
		if e.Stream == runner.Stderr {
			o.stderr.WriteString(e.Text)
		} else {
			o.stdout.WriteString(e.Text)
		}
	case runner.EventDisplayData, runner.EventExecuteResult:
		img, txt := bundle(e.Data)
		if img != nil {
			o.rich = append(o.rich, img)
		} else if txt != "" && e.Type == runner.EventDisplayData {
			o.rich = append(o.rich, &mcp.TextContent{Text: txt})
		}
		if e.Type == runner.EventExecuteResult {
			o.value = txt
		} else {
			o.displays = append(o.displays, Display{MIMETypes: slices.Sorted(maps.Keys(e.Data)), Text: txt})
		}
	case runner.EventError:
		o.err = e.Error
	}
}

// bundle picks from a MIME bundle the image a model should see, if any,
// and its text form.
func bundle(data map[string]any) (mcp.Content, string) {
	var img mcp.Content
	for _, t := range imageTypes {
		s, ok := data[t].(string)
		if !ok {
			continue
		}
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
		if err != nil {
			continue
		}
		img = &mcp.ImageContent{Data: b, MIMEType: t}
		break
	}
	for _, t := range textTypes {
		v, ok := data[t]
		if !ok {
			continue
		}
		if s, ok := v.(string); ok {
			return img, s
		}
		if b, err := json.Marshal(v); err == nil {
			return img, string(b)
		}
	}
	return img, ""
}

// result is the cell's structured output and its content: standard
// output, standard error, rich outputs in order, the value, then the
// traceback.
func (o *cellOutput) result(r runner.ExecuteResult) (ExecuteOut, []mcp.Content) {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := ExecuteOut{
		ExecutionCount: r.ExecutionCount,
		Status:         r.Status,
		Reason:         string(r.Reason),
		Stdout:         strings.ToValidUTF8(o.stdout.String(), "\uFFFD"),
		Stderr:         strings.ToValidUTF8(o.stderr.String(), "\uFFFD"),
		Result:         o.value,
		Displays:       o.displays,
		DurationMS:     ms(r.Exec),
	}
	var content []mcp.Content
	if out.Stdout != "" {
		content = append(content, &mcp.TextContent{Text: out.Stdout})
	}
	if out.Stderr != "" {
		content = append(content, &mcp.TextContent{Text: "stderr:\n" + out.Stderr})
	}
	content = append(content, o.rich...)
	if out.Result != "" {
		content = append(content, &mcp.TextContent{Text: out.Result})
	}
	e := r.Error
	if e == nil {
		e = o.err
	}
	if e != nil {
		out.Error = &CellError{Name: e.Name, Value: e.Value, Traceback: traceback(e)}
		content = append(content, &mcp.TextContent{Text: out.Error.Traceback})
	}
	if r.Status != runner.StatusOK && e == nil {
		content = append(content, &mcp.TextContent{Text: fmt.Sprintf("the cell was stopped: %s", r.Reason)})
	}
	if len(content) == 0 {
		content = append(content, &mcp.TextContent{Text: "(no output)"})
	}
	return out, content
}

// ansi matches terminal colour sequences, which IPython-style tracebacks
// may carry and a model should not have to read.
var ansi = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)

// traceback is an exception's traceback as plain text, ending with its
// name and message.
func traceback(e *runner.ExecError) string {
	tb := ansi.ReplaceAllString(strings.Join(e.Traceback, "\n"), "")
	last := e.Name + ": " + e.Value
	if !strings.Contains(tb, last) {
		tb = strings.TrimRight(tb, "\n")
		if tb != "" {
			tb += "\n"
		}
		tb += last
	}
	return tb
}
