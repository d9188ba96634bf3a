package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/api"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// streamRun posts body to /v1/run with accept and returns the response.
func streamRun(t *testing.T, f *fixture, accept, body string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/v1/run", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	return rec
}

// A streamed run sends each chunk as the agent hands it over, in order,
// never splitting a UTF-8 character, then the plain answer as its end.
func TestRunStreamNDJSON(t *testing.T) {
	rt := &runnertest.Runtime{RunFunc: func(_ context.Context, _ runner.RunRequest, out runner.OutputFunc) (runner.RunResult, error) {
		out(runner.Stdout, []byte("one\n"))
		out(runner.Stderr, []byte("warn\n"))
		out(runner.Stdout, []byte("caf\xc3")) // é split across two chunks
		out(runner.Stdout, []byte("\xa9\n"))
		out(runner.Stdout, []byte{0xff, '\n'})
		return runner.RunResult{Stdout: []byte("one\ncafé\n\xff\n"), Stderr: []byte("warn\n"), ExitCode: 3, Reason: runner.ReasonError}, nil
	}}
	f := newFixture(t, rt, pool.Config{}, api.Config{}, true)
	rec := streamRun(t, f, "application/x-ndjson", `{"language":"python","code":"x"}`)
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/x-ndjson") {
		t.Fatalf("HTTP %d %q: %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	type event struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Base64   string `json:"base64"`
		ExitCode int    `json:"exit_code"`
		Reason   string `json:"reason"`
		Stdout   string `json:"stdout"`
		Start    string `json:"start"`
	}
	var got []event
	sc := bufio.NewScanner(rec.Body)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		got = append(got, e)
	}
	want := []event{
		{Type: "stdout", Text: "one\n"},
		{Type: "stderr", Text: "warn\n"},
		{Type: "stdout", Text: "caf"},
		{Type: "stdout", Text: "é\n"},
		{Type: "stdout", Text: "\uFFFD\n", Base64: "/wo="},
	}
	if len(got) != len(want)+1 {
		t.Fatalf("events %+v", got)
	}
	for i, w := range want {
		if got[i] != w {
			t.Errorf("event %d = %+v, want %+v", i, got[i], w)
		}
	}
	end := got[len(got)-1]
	if end.Type != "end" || end.ExitCode != 3 || end.Reason != "error" || end.Stdout != "one\ncafé\n\uFFFD\n" || end.Start == "" {
		t.Errorf("end %+v", end)
	}
}

// SSE carries the same events; a stream cannot carry an Idempotency-Key,
// and a request refused before the run is a plain JSON error.
func TestRunStreamSSEAndRefusals(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, pool.Config{}, api.Config{}, true)
	rec := streamRun(t, f, "text/event-stream", `{"language":"python","code":"hi"}`)
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(body, "event: stdout\ndata: {\"type\":\"stdout\",\"text\":\"hi\"}\n\n") ||
		!strings.Contains(body, "event: end\ndata: {\"type\":\"end\"") {
		t.Errorf("SSE: HTTP %d %s", rec.Code, body)
	}
	rec = streamRun(t, f, "application/x-ndjson", `{"language":"python","code":"hi"}`, "Idempotency-Key", "k1")
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "stream_with_idempotency_key") {
		t.Errorf("with an Idempotency-Key: HTTP %d %s", rec.Code, rec.Body)
	}
	rec = streamRun(t, f, "application/x-ndjson", `{"language":"cobol","code":"hi"}`)
	if rec.Code != http.StatusBadRequest || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Errorf("unknown language: HTTP %d %q %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	// Without a streaming type the answer is the plain one.
	rec = streamRun(t, f, "application/json", `{"language":"python","code":"hi"}`)
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Body.String(), `{"stdout":"hi"`) {
		t.Errorf("plain: HTTP %d %s", rec.Code, rec.Body)
	}
}
