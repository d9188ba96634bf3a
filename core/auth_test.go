package core_test

import (
	"errors"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/core"
)

func TestAuthenticateOff(t *testing.T) {
	f := newFixture(t, core.Config{})
	for _, tok := range []string{"", "garbage"} {
		c, err := f.svc.Authenticate(peer, tok, "mcp")
		if err != nil || c.Tenant != "" || c.Scopes != nil || c.Door != "mcp" {
			t.Errorf("token %q: %+v, %v; want the anonymous caller of door mcp", tok, c, err)
		}
		for _, scope := range []string{core.ScopeRun, core.ScopeSessions, core.ScopeAdmin} {
			if err := f.svc.Authorize(c, scope); err != nil {
				t.Errorf("scope %s refused with auth off: %v", scope, err)
			}
		}
	}
	if f.svc.AuthEnabled() {
		t.Error("AuthEnabled with no key")
	}
}

func TestAuthenticateOn(t *testing.T) {
	f := newFixture(t, core.Config{Auth: core.Auth{HS256Secret: secret}})
	c, err := f.svc.Authenticate(peer, token(t, "alice", "run sessions"), "e2b")
	if err != nil {
		t.Fatalf("Authenticate: %v", err)
	}
	if c.Tenant != "alice" || !slices.Equal(c.Scopes, []string{"run", "sessions"}) || c.Door != "e2b" {
		t.Errorf("caller = %+v", c)
	}
	if err := f.svc.Authorize(c, core.ScopeRun); err != nil {
		t.Errorf("run scope refused: %v", err)
	}
	e := checkErr(t, "admin scope", f.svc.Authorize(c, core.ScopeAdmin), core.KindForbidden, "insufficient_scope")
	if e.Scope != "admin" || e.Message != `this token does not grant the "admin" scope this route needs` {
		t.Errorf("refusal = %+v", e)
	}
	// A caller a door made up has no scopes when auth is on.
	checkErr(t, "made-up caller", f.svc.Authorize(core.Caller{Tenant: "alice"}, core.ScopeRun), core.KindForbidden, "insufficient_scope")

	_, err = f.svc.Authenticate(peer, "", "e2b")
	if e := checkErr(t, "no token", err, core.KindUnauthenticated, "invalid_token"); e.Message != "missing token" {
		t.Errorf("no token: message %q", e.Message)
	}
	_, err = f.svc.Authenticate(peer, token(t, "alice", "run")+"x", "e2b")
	if e := checkErr(t, "bad signature", err, core.KindUnauthenticated, "invalid_token"); !errors.Is(err, core.ErrInvalidToken) ||
		e.Message != "the token's signature is invalid (signed with another key, or altered)" {
		t.Errorf("bad signature: %+v", e)
	}
	// A door's own credential problem counts and reads as the door words it.
	_, err = f.svc.AuthenticateWith(peer, "jupyter", func() (string, error) { return "", errors.New("use the token scheme") })
	if e := checkErr(t, "door refusal", err, core.KindUnauthenticated, "invalid_token"); e.Message != "use the token scheme" {
		t.Errorf("door refusal: message %q", e.Message)
	}
	if got := calls(t, f.svc, "e2b", "authenticate", "invalid_token"); got != 2 {
		t.Errorf("e2b authenticate failures counted = %g, want 2", got)
	}
}

// Failures from one address block it, whichever door they came through,
// before its token is read; other addresses are not affected.
func TestAuthenticateFailureLimit(t *testing.T) {
	f := newFixture(t, core.Config{Auth: core.Auth{HS256Secret: secret}, AuthFailureLimit: 2, AuthFailureWindow: 10 * time.Second})
	good := token(t, "alice", "run")
	for _, door := range []string{"rest", "mcp"} {
		if _, err := f.svc.Authenticate(peer, "bad", door); err == nil {
			t.Fatal("bad token accepted")
		}
	}
	read := false
	_, err := f.svc.AuthenticateWith(peer, "e2b", func() (string, error) { read = true; return good, nil })
	e := checkErr(t, "blocked address", err, core.KindTooMany, "too_many_auth_failures")
	if read || e.RetryAfter != 5*time.Second || !errors.Is(err, core.ErrAuthFailures) {
		t.Errorf("blocked: token read %t, RetryAfter %s (want 5s), error %v", read, e.RetryAfter, err)
	}
	if want := "too many failed authentications from your address (at most 2 per 10 s); no token from it is checked until the Retry-After seconds have passed"; e.Message != want {
		t.Errorf("message %q\nwant    %q", e.Message, want)
	}
	if _, err := f.svc.Authenticate(netip.MustParseAddr("192.0.2.8"), good, "e2b"); err != nil {
		t.Errorf("another address: %v", err)
	}
	f.clock.Advance(5 * time.Second)
	if _, err := f.svc.Authenticate(peer, good, "e2b"); err != nil {
		t.Errorf("after the wait: %v", err)
	}
}

func TestAdmit(t *testing.T) {
	f := newFixture(t, core.Config{TenantRate: 1, TenantBurst: 2})
	alice := core.Caller{Tenant: "alice", Door: "mcp"}
	for i, want := range []int{1, 0} {
		q, err := f.svc.AdmitQuota(alice)
		if err != nil || q.Limit != 2 || q.Remaining != want {
			t.Fatalf("request %d: %+v, %v; want limit 2, remaining %d", i, q, err, want)
		}
	}
	err := f.svc.Admit(alice)
	e := checkErr(t, "over the burst", err, core.KindTooMany, "rate_limited")
	if e.RetryAfter != time.Second || e.Message != "too many requests: each tenant may send 1 per second (bursts of 2); retry after the Retry-After seconds" {
		t.Errorf("refusal = %+v", e)
	}
	if err := f.svc.Admit(core.Caller{Tenant: "bob"}); err != nil {
		t.Errorf("another tenant: %v", err)
	}
	if got := calls(t, f.svc, "mcp", "admit", "rate_limited"); got != 1 {
		t.Errorf("rate_limited counted %g times for mcp, want 1", got)
	}
}
