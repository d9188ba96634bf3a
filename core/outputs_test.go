package core_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/runner"
)

func TestRunOutputsRefused(t *testing.T) {
	f := newFixture(t, core.Config{})
	caller := core.Caller{Tenant: "alice", Door: "rest"}
	tests := []struct {
		name    string
		outputs []string
		code    string
		msg     string
	}{
		{"empty", []string{""}, "invalid_path", "outputs[0] must not be empty"},
		{"absolute", []string{"out/*.png", "/etc/passwd"}, "invalid_path", "outputs[1] must be relative to the working directory"},
		{"parent", []string{"out/../../x"}, "invalid_path", `outputs[0] must not contain ".." components`},
		{"parent only", []string{".."}, "invalid_path", `outputs[0] must not contain ".." components`},
		{"dot", []string{"."}, "invalid_path", "outputs[0] must name a file, not a directory"},
		{"trailing slash", []string{"out/"}, "invalid_path", "outputs[0] must name a file, not a directory"},
		{"not clean", []string{"./out/*.png"}, "invalid_path", `outputs[0] must be a clean path: no empty or "." components`},
		{"double slash", []string{"out//x"}, "invalid_path", `outputs[0] must be a clean path: no empty or "." components`},
		{"NUL", []string{"a\x00b"}, "invalid_path", "outputs[0] must not contain a NUL byte"},
		{"too long", []string{strings.Repeat("a", 4097)}, "invalid_path", "outputs[0] is too long (at most 4096 bytes)"},
		{"bad class", []string{"out/[a-"}, "invalid_path", `outputs[0] is not a valid pattern (path.Match syntax: *, ?, [a-z], \ escapes)`},
		{"bad class late in the pattern", []string{"x*/[z"}, "invalid_path", `outputs[0] is not a valid pattern (path.Match syntax: *, ?, [a-z], \ escapes)`},
		{"trailing escape", []string{`a\`}, "invalid_path", `outputs[0] is not a valid pattern (path.Match syntax: *, ?, [a-z], \ escapes)`},
		{"too many", slices.Repeat([]string{"x"}, 33), "invalid_request", "too many outputs: 33 (at most 32)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := core.RunInput{Language: "python", Code: "x", Outputs: tc.outputs}
			_, err := f.svc.Run(t.Context(), caller, in, nil)
			if e := checkErr(t, "Run", err, core.KindInvalid, tc.code); e.Message != tc.msg {
				t.Errorf("message %q\nwant    %q", e.Message, tc.msg)
			}
		})
	}
	if n := len(f.rt.Sandboxes()); n != 0 {
		t.Errorf("refused runs started %d sandboxes", n)
	}
}

// The core asks the runner for the patterns under the run's output cap
// and a count, and words every refused entry.
func TestRunOutputs(t *testing.T) {
	f := newFixture(t, core.Config{})
	var got runner.RunRequest
	f.rt.RunFunc = func(_ context.Context, req runner.RunRequest, _ runner.OutputFunc) (runner.RunResult, error) {
		got = req
		return runner.RunResult{Reason: runner.ReasonOK, OutputsTruncated: true, Outputs: []runner.Output{
			{Pattern: "out/*.png", Path: "out/a.png", Size: 3, Mode: "-rw-r--r--", Content: []byte("png")},
			{Pattern: "out/*.png", Path: "out/b.png", Size: 5000, Mode: "-rw-r--r--", Error: runner.OutputTooLarge},
			{Pattern: "out/*.png", Path: "out/c.png", Mode: "lrwxrwxrwx", Error: runner.OutputSymlink},
			{Pattern: "*.csv", Error: runner.OutputNotFound},
		}}, nil
	}
	res, err := f.svc.Run(t.Context(), core.Caller{Tenant: "alice", Door: "rest"}, core.RunInput{
		Language: "python", Code: "x", MaxOutputBytes: 4096, Outputs: []string{"out/*.png", "*.csv"},
	}, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !slices.Equal(got.Outputs, []string{"out/*.png", "*.csv"}) || got.MaxOutputBytes != 4096 || got.MaxOutputFiles != 100 {
		t.Errorf("runner request outputs %q, cap %d bytes, %d files; want the patterns, 4096, 100",
			got.Outputs, got.MaxOutputBytes, got.MaxOutputFiles)
	}
	want := []string{
		"",
		"it has 5000 bytes: with the files before it, more than the run's cap of 4096 bytes (max_output_bytes)",
		"it is a symbolic link, which is not followed",
		"no file matches the pattern",
	}
	for i, o := range res.Result.Outputs {
		if o.Message != want[i] {
			t.Errorf("outputs[%d] message %q, want %q", i, o.Message, want[i])
		}
	}
	if !res.Result.OutputsTruncated || string(res.Result.Outputs[0].Content) != "png" {
		t.Errorf("result = %+v", res.Result)
	}
}

// A run that names no outputs asks the runner for none.
func TestRunNoOutputs(t *testing.T) {
	f := newFixture(t, core.Config{})
	var got runner.RunRequest
	f.rt.RunFunc = func(_ context.Context, req runner.RunRequest, _ runner.OutputFunc) (runner.RunResult, error) {
		got = req
		return runner.RunResult{Reason: runner.ReasonOK}, nil
	}
	if _, err := f.svc.Run(t.Context(), core.Caller{Tenant: "alice"}, core.RunInput{Language: "python", Code: "x", Outputs: []string{}}, nil); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got.Outputs != nil || got.MaxOutputBytes != 0 || got.MaxOutputFiles != 0 {
		t.Errorf("runner request outputs %q, %d, %d; want none", got.Outputs, got.MaxOutputBytes, got.MaxOutputFiles)
	}
}
