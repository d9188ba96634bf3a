package api_test

import (
	"fmt"
	"github.com/paddock-dev/paddock/core"
	"net/http"
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/api"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

func TestRunValidation(t *testing.T) {
	// More requests in a row than a tenant's burst: no rate limit here.
	f := newFixture(t, &runnertest.Runtime{}, pool.Config{}, api.Config{Config: core.Config{TenantRate: -1}}, true)
	many := func(n int, item string) string {
		return "[" + strings.TrimSuffix(strings.Repeat(item+",", n), ",") + "]"
	}
	manyEnv := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"K%d":"v"`, i)
		}
		return "{" + b.String() + "}"
	}
	manyFiles := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"path":"f%d","content":""}`, i)
		}
		return "[" + b.String() + "]"
	}
	file := func(f string) string { return `{"language":"python","code":"x","files":[` + f + `]}` }

	tests := []struct {
		name        string
		body        string
		wantCode    string
		wantMessage string
	}{
		{"invalid UTF-8", "{\"language\":\"python\",\"code\":\"\xff\"}", "invalid_utf8", "request body is not valid UTF-8 (bad byte at offset 29)"},
		{"empty body", "", "invalid_json", "request body is empty; expected a JSON object"},
		{"whitespace body", "  \n", "invalid_json", "request body is empty; expected a JSON object"},
		{"malformed", `{"language":`, "invalid_json", "malformed JSON: unexpected end of input"},
		{"bad token", `{"language" "python"}`, "invalid_json", "malformed JSON at offset 13: invalid character '\"' after object key"},
		{"form encoded", `language=python&code=x`, "invalid_json", "malformed JSON at offset 1: invalid character 'l' looking for beginning of value"},
		{"not an object", `["python"]`, "invalid_json", "request body must be a JSON object, got array"},
		{"trailing data", `{"language":"python","code":"x"} {}`, "invalid_json", "unexpected data after the JSON object at offset 33"},
		{"trailing garbage", "{\"language\":\"python\",\"code\":\"x\"}\n\nxyz", "invalid_json", "unexpected data after the JSON object at offset 34"},
		{"unknown field", `{"language":"python","code":"x","lang":"y"}`, "unknown_field", `unknown field "lang"`},
		{"unknown nested field", file(`{"path":"a","mode":1}`), "unknown_field", `unknown field "mode"`},
		{"code not a string", `{"language":"python","code":1}`, "invalid_json", `field "code" must be a string, got number`},
		{"timeout not an integer", `{"language":"python","code":"x","timeout_ms":1.5}`, "invalid_json", `field "timeout_ms" must be an integer, got number 1.5`},
		{"timeout a string", `{"language":"python","code":"x","timeout_ms":"5"}`, "invalid_json", `field "timeout_ms" must be an integer, got string`},
		{"args not an array", `{"language":"python","code":"x","args":"a b"}`, "invalid_json", `field "args" must be an array, got string`},
		{"env value not a string", `{"language":"python","code":"x","env":{"A":1}}`, "invalid_json", `values in "env" must be strings, got number`},
		{"env not an object", `{"language":"python","code":"x","env":["A=1"]}`, "invalid_json", `field "env" must be an object, got array`},
		{"file path not a string", file(`{"path":7}`), "invalid_json", `field "files.path" must be a string, got number`},
		{"missing language", `{"code":"x"}`, "invalid_request", "language is required (one of: node, python)"},
		{"unknown language", `{"language":"ruby","code":"x"}`, "unknown_language", `unknown language "ruby" (known: node, python)`},
		{"unknown template", `{"language":"python","template":"python-huge","code":"x"}`, "unknown_template", `unknown template "python-huge" (known: node, python)`},
		{"template of another language", `{"language":"node","template":"python","code":"x"}`, "template_language", `template "python" runs python, not node`},
		{"bad template, missing code", `{"language":"node","template":"python"}`, "template_language", `template "python" runs python, not node`},
		{"template not a string", `{"language":"python","template":1,"code":"x"}`, "invalid_json", `field "template" must be a string, got number`},
		{"missing code", `{"language":"python"}`, "invalid_request", "code is required"},
		{"null code", `{"language":"python","code":null}`, "invalid_request", "code is required"},
		{"empty code", `{"language":"python","code":""}`, "invalid_request", "code must not be empty"},
		{"negative timeout", `{"language":"python","code":"x","timeout_ms":-1}`, "invalid_request", "timeout_ms must be between 1 and 60000, or 0 for the default (30000); got -1"},
		{"timeout over max", `{"language":"python","code":"x","timeout_ms":60001}`, "invalid_request", "timeout_ms must be between 1 and 60000, or 0 for the default (30000); got 60001"},
		{"negative output cap", `{"language":"python","code":"x","max_output_bytes":-5}`, "invalid_request", "max_output_bytes must be between 1 and 1048576, or 0 for the default; got -5"},
		{"output cap over max", `{"language":"python","code":"x","max_output_bytes":1048577}`, "invalid_request", "max_output_bytes must be between 1 and 1048576, or 0 for the default; got 1048577"},
		{"too many files", `{"language":"python","code":"x","files":` + manyFiles(101) + `}`, "invalid_request", "too many files: 101 (at most 100)"},
		{"empty path", file(`{"path":""}`), "invalid_path", "files[0].path must not be empty"},
		{"absolute path", file(`{"path":"/etc/passwd"}`), "invalid_path", "files[0].path must be relative to the working directory"},
		{"dot-dot path", file(`{"path":"a"},{"path":"a/../../b"}`), "invalid_path", `files[1].path must not contain ".." components`},
		{"bare dot-dot", file(`{"path":".."}`), "invalid_path", `files[0].path must not contain ".." components`},
		{"NUL in path", file(`{"path":"a\u0000b"}`), "invalid_path", "files[0].path must not contain a NUL byte"},
		{"directory path", file(`{"path":"dir/"}`), "invalid_path", "files[0].path must name a file, not a directory"},
		{"dot path", file(`{"path":"."}`), "invalid_path", "files[0].path must name a file, not a directory"},
		{"long path", file(`{"path":"` + strings.Repeat("a", 4097) + `"}`), "invalid_path", "files[0].path is too long (at most 4096 bytes)"},
		{"duplicate path", file(`{"path":"a.py"},{"path":"./a.py"}`), "invalid_path", `files[1].path "./a.py" is the same file as files[0].path`},
		{"bad encoding", file(`{"path":"a","content":"00","encoding":"hex"}`), "invalid_request", `files[0].encoding must be "utf8" or "base64", got "hex"`},
		{"bad base64", file(`{"path":"a","content":"AA!A","encoding":"base64"}`), "invalid_request", "files[0].content is not valid base64 (bad input at offset 2)"},
		{"too many args", `{"language":"python","code":"x","args":` + many(1001, `"a"`) + `}`, "invalid_request", "too many args: 1001 (at most 1000)"},
		{"NUL in arg", `{"language":"python","code":"x","args":["ok","a\u0000"]}`, "invalid_request", "args[1] must not contain a NUL byte"},
		{"too many env", `{"language":"python","code":"x","env":` + manyEnv(1001) + `}`, "invalid_request", "too many env entries: 1001 (at most 1000)"},
		{"empty env key", `{"language":"python","code":"x","env":{"":"v"}}`, "invalid_request", "env keys must not be empty"},
		{"env key with =", `{"language":"python","code":"x","env":{"A=B":"v"}}`, "invalid_request", `env key "A=B" must not contain '='`},
		{"NUL in env key", `{"language":"python","code":"x","env":{"A\u0000":"v"}}`, "invalid_request", `env key "A\x00" must not contain a NUL byte`},
		{"NUL in env value", `{"language":"python","code":"x","env":{"A":"v\u0000"}}`, "invalid_request", `env["A"] must not contain a NUL byte`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := f.do(t, http.MethodPost, "/v1/run", tc.body)
			want := fmt.Sprintf(`{"code":%q,"message":%s}`+"\n", tc.wantCode, jsonString(t, tc.wantMessage))
			checkResponse(t, rec, http.StatusBadRequest, want)
		})
	}
	if got := f.rt.Sandboxes()[0].Runs(); got != 0 {
		t.Errorf("a bad request reached a sandbox: Runs = %d", got)
	}
}
