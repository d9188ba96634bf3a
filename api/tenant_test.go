package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/api"
	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// H45: another tenant's session id answers exactly as a random one does.
func TestTenantIsolation(t *testing.T) {
	f := newSessionFixture(t, &runnertest.Runtime{}, kernels.Config{}, api.Config{Config: core.Config{Auth: api.Auth{HS256Secret: testSecret}}})
	alice := hs256(t, t0, "alice", "sessions")
	bob := hs256(t, t0, "bob", "sessions run")

	rec := serveAs(t, f.h, http.MethodPost, "/v1/sessions", `{"language":"python","ttl_s":60}`, alice)
	if rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	id := rec.Body.String()[len(`{"id":"`) : len(`{"id":"`)+32]
	if rec := serveAs(t, f.h, http.MethodPut, "/v1/sessions/"+id+"/files?path=secret-A", "A's secret", alice); rec.Code != http.StatusNoContent {
		t.Fatalf("alice's put: %d %s", rec.Code, rec.Body)
	}
	const random = "0123456789abcdef0123456789abcdef"
	const notFound = `{"code":"session_not_found","message":"no such session (it may have expired or been deleted)"}` + "\n"
	tests := []struct {
		name, method, path, body string
	}{
		{"get", http.MethodGet, "", ""},
		{"execute", http.MethodPost, "/execute", `{"code":"open('secret-A').read()"}`},
		{"interrupt", http.MethodPost, "/interrupt", ""},
		{"restart", http.MethodPost, "/restart", ""},
		{"read file", http.MethodGet, "/files?path=secret-A", ""},
		{"list files", http.MethodGet, "/files", ""},
		{"write file", http.MethodPut, "/files?path=secret-A", "overwritten"},
		{"delete", http.MethodDelete, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkResponse(t, serveAs(t, f.h, tc.method, "/v1/sessions/"+id+tc.path, tc.body, bob), http.StatusNotFound, notFound)
			checkResponse(t, serveAs(t, f.h, tc.method, "/v1/sessions/"+random+tc.path, tc.body, bob), http.StatusNotFound, notFound)
		})
	}
	checkResponse(t, serveAs(t, f.h, http.MethodGet, "/v1/sessions", "", bob), http.StatusOK, `{"sessions":[]}`+"\n")

	// Alice's session is untouched.
	rec = serveAs(t, f.h, http.MethodGet, "/v1/sessions", "", alice)
	if rec.Code != http.StatusOK || strings.Count(rec.Body.String(), `"id":"`+id+`"`) != 1 {
		t.Errorf("alice's list: %d %s", rec.Code, rec.Body)
	}
	rec = serveAs(t, f.h, http.MethodGet, "/v1/sessions/"+id+"/files?path=secret-A", "", alice)
	if rec.Code != http.StatusOK || rec.Body.String() != "A's secret" {
		t.Errorf("alice's file: %d %q, want 200 \"A's secret\"", rec.Code, rec.Body)
	}
	if got := f.kernel(t, 1).Restarts(); got != 0 {
		t.Errorf("alice's kernel restarted %d times, want 0", got)
	}
	checkResponse(t, serveAs(t, f.h, http.MethodDelete, "/v1/sessions/"+id, "", alice), http.StatusNoContent, "")
}
