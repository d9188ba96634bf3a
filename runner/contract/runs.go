package contract

import (
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/runner"
)

func testRuns(t *testing.T, e Env) {
	tests := []struct {
		name       string
		lang       string
		req        runner.RunRequest
		wantOut    string
		wantErrSub string
		wantCode   int
		wantReason runner.Reason
	}{
		{name: "python hello", lang: "python", req: runner.RunRequest{Code: "print(6*7)"},
			wantOut: "42\n", wantReason: runner.ReasonOK},
		{name: "node hello", lang: "node", req: runner.RunRequest{Code: "console.log(6*7)"},
			wantOut: "42\n", wantReason: runner.ReasonOK},
		{name: "python stderr and exit code", lang: "python",
			req:        runner.RunRequest{Code: "import sys\nsys.stderr.write('bad\\n')\nsys.exit(3)"},
			wantErrSub: "bad\n", wantCode: 3, wantReason: runner.ReasonError},
		{name: "python exception", lang: "python", req: runner.RunRequest{Code: "1/0"},
			wantErrSub: "ZeroDivisionError: division by zero", wantCode: 1, wantReason: runner.ReasonError},
		{name: "node exception", lang: "node", req: runner.RunRequest{Code: "throw new TypeError('nope')"},
			wantErrSub: "TypeError: nope", wantCode: 1, wantReason: runner.ReasonError},
		{name: "stdin delivered", lang: "python", req: runner.RunRequest{Code: "print(input()[::-1])", Stdin: []byte("olleh\n")},
			wantOut: "hello\n", wantReason: runner.ReasonOK},
		{name: "no stdin is EOF", lang: "python", req: runner.RunRequest{Code: "input()"},
			wantErrSub: "EOFError", wantCode: 1, wantReason: runner.ReasonError},
		{name: "files args env", lang: "python", req: runner.RunRequest{
			Code:  "import sys, os\nprint(open('data/in.txt').read(), sys.argv[1:], os.environ['GREETING'])",
			Files: []runner.File{{Path: "data/in.txt", Content: []byte("file-content")}},
			Args:  []string{"a", "b"}, Env: map[string]string{"GREETING": "hi"}},
			wantOut: "file-content ['a', 'b'] hi\n", wantReason: runner.ReasonOK},
		{name: "runs as non-root", lang: "python", req: runner.RunRequest{Code: "import os; print(os.getuid(), os.getgid(), os.getcwd())"},
			wantOut: "1000 1000 /workspace\n", wantReason: runner.ReasonOK},
		{name: "no network", lang: "python", req: runner.RunRequest{
			Code: "import socket\ntry:\n socket.create_connection(('10.0.0.1', 80), 2)\nexcept OSError as e: print(type(e).__name__)"},
			wantOut: "OSError\n", wantReason: runner.ReasonOK},
		{name: "runtime is not writable", lang: "python", req: runner.RunRequest{
			Code: "import os\ntry:\n open(os.path.dirname(os.__file__)+'/json/__init__.py','a')\nexcept OSError as e: print(type(e).__name__)"},
			wantOut: "PermissionError\n", wantReason: runner.ReasonOK},
		{name: "agent is not writable", lang: "python", req: runner.RunRequest{
			Code: "try:\n open('/opt/paddock/paddock-agent','r+b')\nexcept OSError as e: print(type(e).__name__)"},
			wantOut: "PermissionError\n", wantReason: runner.ReasonOK},
		{name: "a write outside the workspace stays in the sandbox", lang: "python", req: runner.RunRequest{
			Code: "open('/tmp/x','w').write('x'); import os; print(os.path.exists('/tmp/x'))"},
			wantOut: "True\n", wantReason: runner.ReasonOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, _ := run(t, e, tt.lang, nil, tt.req)
			if tt.wantOut != "" && string(res.Stdout) != tt.wantOut {
				t.Errorf("stdout = %q, want %q (stderr %q)", res.Stdout, tt.wantOut, res.Stderr)
			}
			if !strings.Contains(string(res.Stderr), tt.wantErrSub) {
				t.Errorf("stderr = %q, want it to contain %q", res.Stderr, tt.wantErrSub)
			}
			if res.ExitCode != tt.wantCode || res.Reason != tt.wantReason {
				t.Errorf("exit = %d %s, want %d %s (stderr %q)", res.ExitCode, res.Reason, tt.wantCode, tt.wantReason, res.Stderr)
			}
		})
	}
}
