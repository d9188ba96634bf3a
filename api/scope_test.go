package api_test

import (
	"net/http"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"github.com/paddock-dev/paddock/api"
	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

func TestScopes(t *testing.T) {
	f := newSessionFixture(t, &runnertest.Runtime{}, kernels.Config{}, api.Config{Config: core.Config{Auth: api.Auth{HS256Secret: testSecret}}})
	runOnly := hs256(t, t0, "alice", "run")
	sessionsOnly := hs256(t, t0, "alice", "sessions")
	none := hs256(t, t0, "alice", "")
	array := sign(t, jwt.SigningMethodHS256, testSecret, claimsAt(t0, "alice", "", jwt.MapClaims{"scope": nil, "scopes": []string{"run"}}))
	const runBody = `{"language":"python","code":"x"}`
	tests := []struct {
		name, method, target, body, token string
		wantStatus                        int
		wantScope                         string // for a 403
	}{
		{"run with run", http.MethodPost, "/v1/run", runBody, runOnly, http.StatusOK, ""},
		{"run with a scopes array", http.MethodPost, "/v1/run", runBody, array, http.StatusOK, ""},
		{"run with sessions", http.MethodPost, "/v1/run", runBody, sessionsOnly, http.StatusForbidden, "run"},
		{"sessions with run", http.MethodGet, "/v1/sessions", "", runOnly, http.StatusForbidden, "sessions"},
		{"create with run", http.MethodPost, "/v1/sessions", `{"language":"python"}`, runOnly, http.StatusForbidden, "sessions"},
		{"execute with no scope", http.MethodPost, "/v1/sessions/abc/execute", `{"code":"1"}`, none, http.StatusForbidden, "sessions"},
		{"sessions with sessions", http.MethodGet, "/v1/sessions", "", sessionsOnly, http.StatusOK, ""},
		{"templates with no scope", http.MethodGet, "/v1/templates", "", none, http.StatusOK, ""},
		{"healthz without a token", http.MethodGet, "/healthz", "", "", http.StatusOK, ""},
		{"readyz without a token", http.MethodGet, "/readyz", "", "", http.StatusOK, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := serveAs(t, f.h, tc.method, tc.target, tc.body, tc.token)
			if tc.wantStatus != http.StatusForbidden {
				if rec.Code != tc.wantStatus {
					t.Errorf("status = %d, want %d (body %s)", rec.Code, tc.wantStatus, rec.Body)
				}
				return
			}
			checkResponse(t, rec, http.StatusForbidden, `{"code":"insufficient_scope","message":"this token does not grant the \"`+
				tc.wantScope+`\" scope this route needs"}`+"\n")
			if got, want := rec.Header().Get("WWW-Authenticate"), `Bearer error="insufficient_scope", scope="`+tc.wantScope+`"`; got != want {
				t.Errorf("WWW-Authenticate = %s, want %s", got, want)
			}
		})
	}
	if got := f.rt.Starts(); got != 2 {
		t.Errorf("sandbox starts = %d, want 2 (one per allowed run; refused requests start none)", got)
	}
}
