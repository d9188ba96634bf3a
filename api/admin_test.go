package api_test

import (
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/api"
	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// createAs makes a session through the API for token's tenant and
// returns its id.
func createAs(t *testing.T, f *sessionFixture, body, token string) string {
	t.Helper()
	rec := serveAs(t, f.h, http.MethodPost, "/v1/sessions", body, token)
	m := regexp.MustCompile(`"id":"([0-9a-f]{32})"`).FindStringSubmatch(rec.Body.String())
	if rec.Code != http.StatusCreated || m == nil {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	return m[1]
}

// An admin token lists every tenant's sessions with their owners; the
// tenants' own views are unchanged, and no other scope opens the admin
// route.
func TestAdminListsEverySession(t *testing.T) {
	f := newSessionFixture(t, &runnertest.Runtime{}, kernels.Config{}, api.Config{Config: core.Config{Auth: api.Auth{HS256Secret: testSecret}}})
	alice := hs256(t, t0, "alice", "sessions")
	bob := hs256(t, t0, "bob", "sessions run")
	admin := hs256(t, t0, "ops", "admin")
	everything := hs256(t, t0, "alice", "run sessions")

	checkResponse(t, serveAs(t, f.h, http.MethodGet, "/v1/admin/sessions", "", admin), http.StatusOK, `{"sessions":[]}`+"\n")
	aliceID := createAs(t, f, `{"language":"python","ttl_s":60}`, alice)
	f.clock.Advance(time.Second)
	bobID := createAs(t, f, `{"language":"node"}`, bob)

	checkResponse(t, serveAs(t, f.h, http.MethodGet, "/v1/admin/sessions", "", admin), http.StatusOK, `{"sessions":[`+
		`{"owner":"alice","id":"`+aliceID+`","language":"python","template":"python","state":"idle","execution_count":0,`+
		`"created_at":"2026-03-01T12:00:00Z","last_used_at":"2026-03-01T12:00:00Z","expires_at":"2026-03-01T12:01:00Z","ttl_s":60,"warm":false,"start":"cold"},`+
		`{"owner":"bob","id":"`+bobID+`","language":"node","template":"node","state":"idle","execution_count":0,`+
		`"created_at":"2026-03-01T12:00:01Z","last_used_at":"2026-03-01T12:00:01Z","expires_at":"2026-03-01T12:15:01Z","ttl_s":900,"warm":false,"start":"cold"}`+
		`]}`+"\n")
	checkResponse(t, serveAs(t, f.h, http.MethodGet, "/v1/sessions", "", alice), http.StatusOK, `{"sessions":[`+
		`{"id":"`+aliceID+`","language":"python","template":"python","state":"idle","execution_count":0,`+
		`"created_at":"2026-03-01T12:00:00Z","last_used_at":"2026-03-01T12:00:00Z","expires_at":"2026-03-01T12:01:00Z","ttl_s":60,"warm":false,"start":"cold"}`+
		`]}`+"\n")

	const forbidden = `{"code":"insufficient_scope","message":"this token does not grant the \"admin\" scope this route needs"}` + "\n"
	for _, tc := range []struct{ name, token string }{
		{"sessions scope", alice},
		{"run and sessions scopes", everything},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := serveAs(t, f.h, http.MethodGet, "/v1/admin/sessions", "", tc.token)
			checkResponse(t, rec, http.StatusForbidden, forbidden)
			if got, want := rec.Header().Get("WWW-Authenticate"), `Bearer error="insufficient_scope", scope="admin"`; got != want {
				t.Errorf("WWW-Authenticate = %s, want %s", got, want)
			}
		})
	}
	// The admin view is read-only: an admin token acts on no one's
	// session by id.
	rec := serveAs(t, f.h, http.MethodDelete, "/v1/sessions/"+aliceID, "", admin)
	if rec.Code != http.StatusForbidden {
		t.Errorf("admin DELETE of alice's session: %d %s, want 403", rec.Code, rec.Body)
	}
	rec = serveAs(t, f.h, http.MethodGet, "/v1/admin/sessions", "", "")
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("no token: %d %s, want 401", rec.Code, rec.Body)
	}
}

// With auth off every request is the anonymous tenant with every scope:
// the admin view lists its sessions under owner "".
func TestAdminSessionsWithoutAuth(t *testing.T) {
	f := newSessionFixture(t, &runnertest.Runtime{}, kernels.Config{}, api.Config{})
	id := f.create(t, `{"language":"python"}`)
	checkResponse(t, f.do(t, http.MethodGet, "/v1/admin/sessions", ""), http.StatusOK, `{"sessions":[`+
		`{"owner":"","id":"`+id+`","language":"python","template":"python","state":"idle","execution_count":0,`+
		`"created_at":"2026-03-01T12:00:00Z","last_used_at":"2026-03-01T12:00:00Z","expires_at":"2026-03-01T12:15:00Z","ttl_s":900,"warm":false,"start":"cold"}`+
		`]}`+"\n")
}

func TestAdminSessionsDisabled(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, pool.Config{}, api.Config{}, false)
	checkResponse(t, f.do(t, http.MethodGet, "/v1/admin/sessions", ""), http.StatusNotImplemented,
		`{"code":"not_implemented","message":"sessions are not enabled on this server"}`+"\n")
	checkResponse(t, f.do(t, http.MethodPost, "/v1/admin/sessions", ""), http.StatusMethodNotAllowed,
		`{"code":"method_not_allowed","message":"method POST is not allowed here"}`+"\n")
}
