package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/paddock-dev/paddock/core"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/api"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// FuzzRunRequest posts arbitrary bodies to POST /v1/run of the API over a
// real pool of fake sandboxes (which echo the code as stdout). Whatever the
// body, the handler must not panic, must not answer 5xx, and must answer
// one valid JSON document: a run result or an error with a code. The seeds
// are in testdata/fuzz/FuzzRunRequest.
func FuzzRunRequest(f *testing.F) {
	m, err := pool.New(&runnertest.Runtime{}, pool.Config{Templates: []pool.Template{
		{Name: "python", Spec: runner.Spec{Language: "python"}, Size: 1},
		{Name: "node", Spec: runner.Spec{Language: "node"}, Size: 0},
	}}, nil)
	if err != nil {
		f.Fatal(err)
	}
	m.Start()
	f.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			f.Errorf("closing the pool: %v", err)
		}
	})
	// Small caps, so that the fuzzer reaches them; no rate limit, so that
	// every input is judged on its own.
	h := api.New(api.Config{MaxBodyBytes: 128 << 10, Config: core.Config{Pool: m, Templates: testTemplates, TenantRate: -1}})

	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/v1/run", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)

		raw := rec.Body.Bytes()
		if rec.Code >= 500 {
			t.Fatalf("status %d for body %q: %s", rec.Code, body, raw)
		}
		if got := rec.Header().Get("Content-Type"); got != "application/json; charset=utf-8" {
			t.Fatalf("status %d: Content-Type %q", rec.Code, got)
		}
		if !json.Valid(raw) {
			t.Fatalf("status %d: the response is not valid JSON: %q", rec.Code, raw)
		}
		var resp struct {
			Code   string `json:"code"`
			Reason string `json:"reason"`
		}
		if err := json.Unmarshal(raw, &resp); err != nil {
			t.Fatalf("status %d: response %q: %v", rec.Code, raw, err)
		}
		switch {
		case rec.Code == http.StatusOK && resp.Reason == "":
			t.Fatalf("200 without a reason: %s", raw)
		case rec.Code != http.StatusOK && resp.Code == "":
			t.Fatalf("status %d without an error code: %s", rec.Code, raw)
		}
	})
}

// Hostile request bodies, answered by the API alone: each is
// refused with 400 and a code before any sandbox is taken (the NUL byte
// in code is the program's business: it runs and the language reports it).
func TestRunHostileBodies(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, pool.Config{}, api.Config{Config: core.Config{TenantRate: -1}}, true)
	deep := func(open, close string, n int) string { return strings.Repeat(open, n) + strings.Repeat(close, n) }
	tests := []struct {
		name        string
		body        string
		wantCode    string
		wantMessage string
	}{
		{"duplicate key", `{"language":"python","code":"print(1)","code":"print(2)"}`,
			"duplicate_key", `duplicate key "code": each key may appear once per object`},
		{"duplicate key in another case", `{"language":"python","code":"print(1)","Language":"node"}`,
			"duplicate_key", `duplicate key "Language" (the same field as "language"): each key may appear once per object`},
		{"duplicate env key", `{"language":"python","code":"x","env":{"A":"1","\u0041":"2"}}`,
			"duplicate_key", `duplicate key "A" in env: each key may appear once per object`},
		{"duplicate key in a file", `{"language":"python","code":"x","files":[{"path":"a","path":"b"}]}`,
			"duplicate_key", `duplicate key "path" in files[0]: each key may appear once per object`},
		{"100k-deep arrays", deep("[", "]", 100000),
			"invalid_json", "malformed JSON at offset 10001: invalid character '[' exceeded max depth"},
		{"100k-deep arrays in a field", `{"language":"python","code":"x","args":` + deep("[", "]", 100000) + `}`,
			"invalid_json", "malformed JSON at offset 10039: invalid character '[' exceeded max depth"},
		{"100k-deep objects", strings.Repeat(`{"a":`, 100000) + "1" + strings.Repeat("}", 100000),
			"invalid_json", "malformed JSON at offset 50001: invalid character '{' exceeded max depth"},
		{"raw NUL byte in a string", "{\"language\":\"python\",\"code\":\"print(1)\x00\"}",
			"invalid_json", "malformed JSON at offset 38: invalid character '\\x00' in string literal"},
		{"lone surrogate bytes", "{\"language\":\"python\",\"code\":\"\xed\xa0\x80\"}",
			"invalid_utf8", "request body is not valid UTF-8 (bad byte at offset 29)"},
		{"huge number", `{"language":"python","code":"x","timeout_ms":1e400}`,
			"invalid_json", `field "timeout_ms" must be an integer, got number 1e400`},
		{"huge integer", `{"language":"python","code":"x","max_output_bytes":99999999999999999999999}`,
			"invalid_json", `field "max_output_bytes" must be an integer, got number 99999999999999999999999`},
		{"language not a string", `{"language":["python"],"code":"x"}`,
			"invalid_json", `field "language" must be a string, got array`},
		{"null body", `null`, "invalid_request", "language is required (one of: node, python)"},
		{"unknown language", `{"language":"cobol","code":"x"}`,
			"unknown_language", `unknown language "cobol" (known: node, python)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := f.do(t, http.MethodPost, "/v1/run", tc.body)
			want := fmt.Sprintf(`{"code":%q,"message":%s}`+"\n", tc.wantCode, jsonString(t, tc.wantMessage))
			checkResponse(t, rec, http.StatusBadRequest, want)
		})
	}
	if got := f.rt.Sandboxes()[0].Runs(); got != 0 {
		t.Errorf("a refused body reached a sandbox: Runs = %d", got)
	}
}
