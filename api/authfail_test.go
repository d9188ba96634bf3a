package api_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/paddock-dev/paddock/api"
	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// serveFrom serves one request from the client at remote carrying the
// Authorization header auth (none when empty).
func serveFrom(t *testing.T, h http.Handler, remote, auth string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/v1/sessions", nil)
	req.RemoteAddr = remote
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// Three failed authentications per 30 s per address: the fourth request
// from that address is refused before its token is read, whatever the
// token; other addresses are untouched, and one failure is forgiven
// every 10 s.
func TestAuthFailureLimit(t *testing.T) {
	f := newSessionFixture(t, &runnertest.Runtime{}, kernels.Config{}, api.Config{Config: core.Config{Auth: api.Auth{HS256Secret: testSecret}, AuthFailureLimit: 3, AuthFailureWindow: 30 * time.Second, TenantRate: -1}})
	valid := "Bearer " + hs256(t, t0, "alice", "sessions")
	wrongKey := "Bearer " + sign(t, jwt.SigningMethodHS256, []byte("another secret of 32 bytes......"), claimsAt(t0, "alice", "sessions", nil))
	const (
		attacker = "198.51.100.7:40000"
		ok       = http.StatusOK
		refused  = http.StatusUnauthorized
		limited  = http.StatusTooManyRequests
	)
	steps := []struct {
		name           string
		advance        time.Duration
		remote, auth   string
		wantStatus     int
		wantRetryAfter string // for a 429
	}{
		{name: "no token", remote: attacker, wantStatus: refused},
		{name: "garbage", remote: attacker, auth: "Bearer not-a-jwt", wantStatus: refused},
		{name: "wrong key", remote: attacker, auth: wrongKey, wantStatus: refused},
		{name: "limit reached: a valid token is not read", remote: attacker, auth: valid, wantStatus: limited, wantRetryAfter: "10"},
		{name: "another port of the address", remote: "198.51.100.7:40001", auth: wrongKey, wantStatus: limited, wantRetryAfter: "10"},
		{name: "the address as IPv4-mapped IPv6", remote: "[::ffff:198.51.100.7]:1", auth: valid, wantStatus: limited, wantRetryAfter: "10"},
		{name: "another address", remote: "198.51.100.8:40000", auth: valid, wantStatus: ok},
		{name: "9 s later", advance: 9 * time.Second, remote: attacker, auth: valid, wantStatus: limited, wantRetryAfter: "1"},
		{name: "10 s later: one failure forgiven", advance: time.Second, remote: attacker, auth: valid, wantStatus: ok},
		{name: "successes do not refill", remote: attacker, auth: wrongKey, wantStatus: refused},
		{name: "blocked again", remote: attacker, auth: valid, wantStatus: limited, wantRetryAfter: "10"},
		{name: "all forgiven after the window", advance: 30 * time.Second, remote: attacker, auth: "Bearer x", wantStatus: refused},
		{name: "two more failures allowed", remote: attacker, auth: "Bearer y", wantStatus: refused},
		{name: "the third", remote: attacker, auth: "Bearer z", wantStatus: refused},
		{name: "and the limit again", remote: attacker, auth: valid, wantStatus: limited, wantRetryAfter: "10"},

		// IPv6 clients are counted by /64.
		{name: "v6 1", remote: "[2001:db8:1:2::1]:5", auth: wrongKey, wantStatus: refused},
		{name: "v6 2", remote: "[2001:db8:1:2::2]:5", auth: wrongKey, wantStatus: refused},
		{name: "v6 3", remote: "[2001:db8:1:2:ffff::3]:5", auth: wrongKey, wantStatus: refused},
		{name: "v6 same /64", remote: "[2001:db8:1:2:abcd::9]:6", auth: valid, wantStatus: limited, wantRetryAfter: "10"},
		{name: "v6 next /64", remote: "[2001:db8:1:3::1]:5", auth: valid, wantStatus: ok},
	}
	for _, st := range steps {
		f.clock.Advance(st.advance)
		rec := serveFrom(t, f.h, st.remote, st.auth)
		if rec.Code != st.wantStatus {
			t.Fatalf("%s: status %d (%s), want %d", st.name, rec.Code, rec.Body, st.wantStatus)
		}
		if st.wantStatus != limited {
			continue
		}
		checkResponse(t, rec, limited, `{"code":"too_many_auth_failures","message":"too many failed authentications `+
			`from your address (at most 3 per 30 s); no token from it is checked until the Retry-After seconds have passed"}`+"\n")
		if got := rec.Header().Get("Retry-After"); got != st.wantRetryAfter {
			t.Errorf("%s: Retry-After = %q, want %q", st.name, got, st.wantRetryAfter)
		}
		if got := rec.Header().Get("WWW-Authenticate"); got != "" {
			t.Errorf("%s: WWW-Authenticate = %q on a 429, want none", st.name, got)
		}
	}
}

// Successful authentications are never counted, however many.
func TestAuthFailureLimitIgnoresSuccesses(t *testing.T) {
	f := newSessionFixture(t, &runnertest.Runtime{}, kernels.Config{}, api.Config{Config: core.Config{Auth: api.Auth{HS256Secret: testSecret}, AuthFailureLimit: 1, TenantRate: -1}})
	valid := "Bearer " + hs256(t, t0, "alice", "sessions")
	for i := range 50 {
		if rec := serveFrom(t, f.h, "192.0.2.1:1", valid); rec.Code != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, rec.Code, rec.Body)
		}
	}
	if rec := serveFrom(t, f.h, "192.0.2.1:1", "Bearer x"); rec.Code != http.StatusUnauthorized {
		t.Fatalf("first failure: %d %s, want 401", rec.Code, rec.Body)
	}
	rec := serveFrom(t, f.h, "192.0.2.1:1", valid)
	if got := rec.Header().Get("Retry-After"); rec.Code != http.StatusTooManyRequests || got != "60" {
		t.Errorf("after the one allowed failure: %d, Retry-After %q; want 429, 60", rec.Code, got)
	}
}

// With auth off nothing is verified, so nothing fails or is limited.
func TestAuthFailureLimitWithoutAuth(t *testing.T) {
	f := newSessionFixture(t, &runnertest.Runtime{}, kernels.Config{}, api.Config{Config: core.Config{AuthFailureLimit: 1, TenantRate: -1}})
	for i := range 5 {
		if rec := serveFrom(t, f.h, "192.0.2.1:1", "Bearer "+strings.Repeat("x", i)); rec.Code != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, rec.Code, rec.Body)
		}
	}
}
