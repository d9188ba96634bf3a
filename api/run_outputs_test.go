package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/api"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// A run's outputs reach the answer as the request's files are shaped:
// path, content and its encoding; a refused file or pattern carries its
// code and the core's message.
func TestRunOutputs(t *testing.T) {
	var got runner.RunRequest
	rt := &runnertest.Runtime{RunFunc: func(_ context.Context, req runner.RunRequest, _ runner.OutputFunc) (runner.RunResult, error) {
		got = req
		return runner.RunResult{Reason: runner.ReasonOK, OutputsTruncated: true, Outputs: []runner.Output{
			{Pattern: "out/*.png", Path: "out/plot.png", Size: 4, Mode: "-rw-r--r--", Content: []byte("\x89PNG")},
			{Pattern: "out/*.png", Path: "out/empty.png", Mode: "-rw-r--r--", Content: []byte{}},
			{Pattern: "out/*.png", Path: "out/huge.png", Size: 2000, Mode: "-rw-r--r--", Error: runner.OutputTooLarge},
			{Pattern: "*.csv", Error: runner.OutputNotFound},
		}}, nil
	}}
	f := newFixture(t, rt, pool.Config{}, api.Config{}, true)
	rec := f.do(t, http.MethodPost, "/v1/run", `{"language":"python","code":"x","max_output_bytes":1024,"outputs":["out/*.png","*.csv"]}`)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d, body %s", rec.Code, rec.Body)
	}
	if len(got.Outputs) != 2 || got.MaxOutputBytes != 1024 || got.MaxOutputFiles != 100 {
		t.Errorf("runner request outputs %q, %d bytes, %d files", got.Outputs, got.MaxOutputBytes, got.MaxOutputFiles)
	}
	want := `"outputs":[` +
		`{"pattern":"out/*.png","path":"out/plot.png","size":4,"mode":"-rw-r--r--","content":"iVBORw==","encoding":"base64"},` +
		`{"pattern":"out/*.png","path":"out/empty.png","size":0,"mode":"-rw-r--r--","content":"","encoding":"base64"},` +
		`{"pattern":"out/*.png","path":"out/huge.png","size":2000,"mode":"-rw-r--r--","error":{"code":"too_large",` +
		`"message":"it has 2000 bytes: with the files before it, more than the run's cap of 1024 bytes (max_output_bytes)"}},` +
		`{"pattern":"*.csv","error":{"code":"not_found","message":"no file matches the pattern"}}],` +
		`"outputs_truncated":true`
	if body := rec.Body.String(); !strings.Contains(body, want) {
		t.Errorf("body %s\nwant it to hold %s", body, want)
	}
}

func TestRunOutputsRefused(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, pool.Config{}, api.Config{}, true)
	tests := []struct{ name, body, want string }{
		{"absolute", `{"language":"python","code":"x","outputs":["/etc/*"]}`,
			`{"code":"invalid_path","message":"outputs[0] must be relative to the working directory"}`},
		{"parent", `{"language":"python","code":"x","outputs":["ok.txt","../*"]}`,
			`{"code":"invalid_path","message":"outputs[1] must not contain \"..\" components"}`},
		{"not a list", `{"language":"python","code":"x","outputs":"*.png"}`,
			`{"code":"invalid_json","message":"field \"outputs\" must be an array, got string"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkResponse(t, f.do(t, http.MethodPost, "/v1/run", tt.body), http.StatusBadRequest, tt.want+"\n")
		})
	}
}
