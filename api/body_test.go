package api_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/api"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// guardedBody fails the test if the handler reads more than allow bytes.
type guardedBody struct {
	t     *testing.T
	r     io.Reader
	allow int
	read  int
}

func (g *guardedBody) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	g.read += n
	if g.read > g.allow {
		g.t.Errorf("handler read %d bytes of the body, want at most %d", g.read, g.allow)
	}
	return n, err
}

func (g *guardedBody) Close() error { return nil }

func TestRunBodyTooLarge(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, pool.Config{}, api.Config{MaxBodyBytes: 64}, true)
	const want = `{"code":"body_too_large","message":"request body exceeds 64 bytes"}` + "\n"
	big := `{"language":"python","code":"` + strings.Repeat("x", 100) + `"}`
	tests := []struct {
		name          string
		body          string
		contentLength int64
		allow         int // bytes the handler may read
		wantStatus    int
		wantBody      string
	}{
		{name: "declared length over the cap is refused unread", body: big, contentLength: int64(len(big)), allow: 0, wantStatus: http.StatusRequestEntityTooLarge, wantBody: want},
		{name: "huge declared length", body: big, contentLength: 1 << 40, allow: 0, wantStatus: http.StatusRequestEntityTooLarge, wantBody: want},
		{name: "unknown length over the cap stops at the cap", body: big, contentLength: -1, allow: 65, wantStatus: http.StatusRequestEntityTooLarge, wantBody: want},
		{name: "exactly the cap is fine", body: `{"language":"python","code":"` + strings.Repeat("x", 64-32) + `"}`, contentLength: 64, allow: 64, wantStatus: http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/v1/run", nil)
			req.Body = &guardedBody{t: t, r: strings.NewReader(tc.body), allow: tc.allow}
			req.ContentLength = tc.contentLength
			rec := httptest.NewRecorder()
			f.h.ServeHTTP(rec, req)
			if rec.Code != tc.wantStatus {
				t.Fatalf("status = %d, want %d (body %s)", rec.Code, tc.wantStatus, rec.Body)
			}
			if tc.wantBody != "" {
				checkResponse(t, rec, tc.wantStatus, tc.wantBody)
				if got := rec.Header().Get("Connection"); got != "close" {
					t.Errorf("Connection = %q, want close", got)
				}
			}
		})
	}
}
