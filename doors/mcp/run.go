package mcpdoor

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/runner"
)

// runCode is run_code: one program in a fresh sandbox, through the core.
func (d *door) runCode(ctx context.Context, req *mcp.CallToolRequest, in RunCodeIn) (*mcp.CallToolResult, RunCodeOut, error) {
	c, err := d.caller(req)
	if err != nil {
		return failed[RunCodeOut](err)
	}
	files := make([]core.File, 0, len(in.Files))
	for _, f := range in.Files {
		files = append(files, core.File{Path: f.Path, Content: []byte(f.Content), Encoding: f.Encoding})
	}
	res, err := d.core.Run(ctx, c, core.RunInput{
		Language: in.Language,
		Template: in.Template,
		Code:     in.Code,
		Files:    files,
		Timeout:  core.Scaled(int64(in.TimeoutMS), time.Millisecond),
		Outputs:  in.Outputs,
	}, nil)
	if err != nil {
		return failed[RunCodeOut](err)
	}
	r := res.Result
	out := RunCodeOut{
		Stdout:          text(r.Stdout),
		Stderr:          text(r.Stderr),
		ExitCode:        r.ExitCode,
		Reason:          string(r.Reason),
		StdoutTruncated: r.StdoutTruncated,
		StderrTruncated: r.StderrTruncated,
		Template:        res.Template,
		DurationMS:      ms(r.Exec),
	}
	var content []mcp.Content
	if out.Stdout != "" {
		content = append(content, &mcp.TextContent{Text: out.Stdout})
	}
	if out.Stderr != "" {
		content = append(content, &mcp.TextContent{Text: "stderr:\n" + out.Stderr})
	}
	var returned []mcp.Content
	out.Outputs, returned = outputContent(r.Outputs)
	content = append(content, returned...)
	failedRun := r.Reason != runner.ReasonOK
	if failedRun || len(content) == 0 {
		content = append(content, &mcp.TextContent{Text: ending(out)})
	}
	return &mcp.CallToolResult{Content: content, IsError: failedRun}, out, nil
}

// ending says how a run ended, for a model.
func ending(o RunCodeOut) string {
	s := fmt.Sprintf("exit code %d (%s)", o.ExitCode, o.Reason)
	if o.Stdout == "" && o.Stderr == "" {
		s += ", no output"
	}
	if o.StdoutTruncated || o.StderrTruncated {
		s += "; output was truncated at the limit"
	}
	return s
}

// decode returns content in the given encoding: utf8 (or none) or base64.
func decode(content, encoding string) ([]byte, error) {
	switch encoding {
	case "", "utf8", "utf-8":
		return []byte(content), nil
	case "base64":
		b, err := base64.StdEncoding.DecodeString(content)
		if err != nil {
			return nil, fmt.Errorf("content is not valid base64: %v", err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("encoding %q is not utf8 or base64", encoding)
}

// text is b as a string, invalid UTF-8 replaced by U+FFFD.
func text(b []byte) string {
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

func ms(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}

// invalid is a bad argument the core never saw.
func invalid(msg string) error {
	return &core.Error{Kind: core.KindInvalid, Code: "invalid_request", Message: msg}
}
