package api_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/paddock-dev/paddock/api"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// lockedBuffer is a log sink safe for concurrent handlers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Over a real loopback server, as curl would talk to it.
func TestRealServer(t *testing.T) {
	logs := &lockedBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	f := newFixture(t, &runnertest.Runtime{}, pool.Config{}, api.Config{MaxBodyBytes: 64, Logger: logger}, true)
	srv := httptest.NewServer(f.h)
	defer srv.Close()

	tests := []struct {
		name        string
		contentType string
		body        string
		wantStatus  int
		wantBody    string
	}{
		{
			name:        "curl -d",
			contentType: "application/x-www-form-urlencoded",
			body:        `{"language":"python","code":"hi"}`,
			wantStatus:  http.StatusOK,
		},
		{
			name:        "too large",
			contentType: "application/json",
			body:        `{"language":"python","code":"` + strings.Repeat("x", 8000) + `"}`,
			wantStatus:  http.StatusRequestEntityTooLarge,
			wantBody:    `{"code":"body_too_large","message":"request body exceeds 64 bytes"}` + "\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/v1/run", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", tc.contentType)
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatalf("POST: %v", err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatalf("reading response: %v", err)
			}
			if resp.StatusCode != tc.wantStatus {
				t.Errorf("status = %d, want %d (body %s)", resp.StatusCode, tc.wantStatus, body)
			}
			if tc.wantBody != "" && string(body) != tc.wantBody {
				t.Errorf("body = %s, want %s", body, tc.wantBody)
			}
		})
	}
	if got := logs.String(); !strings.Contains(got, "status=200") || !strings.Contains(got, "sandbox_id=fake-0001") ||
		!strings.Contains(got, "status=413") {
		t.Errorf("request log lacks status/sandbox lines:\n%s", got)
	}
}

func TestPanicIsLoggedNotShown(t *testing.T) {
	logs := &lockedBuffer{}
	rt := &runnertest.Runtime{RunFunc: func(context.Context, runner.RunRequest, runner.OutputFunc) (runner.RunResult, error) {
		panic("secret panic text")
	}}
	f := newFixture(t, rt, pool.Config{}, api.Config{Logger: slog.New(slog.NewTextHandler(logs, nil))}, true)
	rec := f.do(t, http.MethodPost, "/v1/run", `{"language":"python","code":"x"}`)
	checkResponse(t, rec, http.StatusInternalServerError, `{"code":"internal","message":"internal error"}`+"\n")
	if got := logs.String(); !strings.Contains(got, "secret panic text") || !strings.Contains(got, "status=500") {
		t.Errorf("log lacks the panic or the 500:\n%s", got)
	}
}
