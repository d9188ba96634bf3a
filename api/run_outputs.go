package api

import (
	"encoding/base64"

	"github.com/paddock-dev/paddock/runner"
)

// outputResponse is one entry of a run's outputs: a file returned, in the
// shape of a request's file (path, content, encoding), or why a file or a
// pattern has none.
type outputResponse struct {
	Pattern  string         `json:"pattern"`
	Path     string         `json:"path,omitempty"`
	Size     *int64         `json:"size,omitempty"` // of a file returned, or too large
	Mode     string         `json:"mode,omitempty"`
	Content  *string        `json:"content,omitempty"`  // base64
	Encoding string         `json:"encoding,omitempty"` // "base64" beside content
	Error    *outputFailure `json:"error,omitempty"`
}

type outputFailure struct {
	Code    runner.OutputError `json:"code"`
	Message string             `json:"message"`
}

func newOutputResponses(outputs []runner.Output) []outputResponse {
	if len(outputs) == 0 {
		return nil
	}
	resp := make([]outputResponse, len(outputs))
	for i, o := range outputs {
		r := outputResponse{Pattern: o.Pattern, Path: o.Path, Mode: o.Mode}
		if o.Error == "" || o.Error == runner.OutputTooLarge {
			r.Size = &o.Size
		}
		if o.Error != "" {
			r.Error = &outputFailure{Code: o.Error, Message: o.Message}
		} else {
			content := base64.StdEncoding.EncodeToString(o.Content)
			r.Content, r.Encoding = &content, "base64"
		}
		resp[i] = r
	}
	return resp
}
