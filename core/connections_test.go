package core_test

import (
	"errors"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/core"
)

// hold takes one connection for c and fails the test if refused.
func hold(t *testing.T, svc *core.Service, c core.Caller) func() {
	t.Helper()
	release, err := svc.HoldConnection(c)
	if err != nil {
		t.Fatalf("holding a connection for %q: %v", c.Tenant, err)
	}
	return release
}

func TestHoldConnectionLimit(t *testing.T) {
	f := newFixture(t, core.Config{TenantMaxConnections: 2})
	alice := core.Caller{Tenant: "alice", Door: "mcp"}
	first := hold(t, f.svc, alice)
	hold(t, f.svc, alice)
	_, err := f.svc.HoldConnection(alice)
	e := checkErr(t, "third connection", err, core.KindTooMany, "too_many_connections")
	if e.RetryAfter != 5*time.Second {
		t.Errorf("RetryAfter = %s, want 5s", e.RetryAfter)
	}
	if !errors.Is(err, core.ErrTooManyConnections) {
		t.Errorf("error %v does not wrap ErrTooManyConnections", err)
	}
	if got := calls(t, f.svc, "mcp", "hold_connection", "too_many_connections"); got != 1 {
		t.Errorf("refused holds counted %v, want 1", got)
	}
	if got := calls(t, f.svc, "mcp", "hold_connection", "ok"); got != 2 {
		t.Errorf("granted holds counted %v, want 2", got)
	}

	// Releasing one frees one slot; releasing it again frees nothing more.
	first()
	first()
	hold(t, f.svc, alice)
	if _, err := f.svc.HoldConnection(alice); err == nil {
		t.Fatal("a twice-released hold freed two slots: a fourth connection was let in")
	}
}

// The limit is each tenant's, not the server's.
func TestHoldConnectionPerTenant(t *testing.T) {
	f := newFixture(t, core.Config{TenantMaxConnections: 1})
	alice := core.Caller{Tenant: "alice", Door: "mcp"}
	hold(t, f.svc, alice)
	if _, err := f.svc.HoldConnection(alice); err == nil {
		t.Fatal("alice's second connection was let in")
	}
	release := hold(t, f.svc, core.Caller{Tenant: "bob", Door: "mcp"})
	release()
	hold(t, f.svc, core.Caller{Tenant: "", Door: "jupyter"})
}

func TestHoldConnectionDefaultAndOff(t *testing.T) {
	f := newFixture(t, core.Config{})
	if got := f.svc.Config().TenantMaxConnections; got != core.DefaultTenantMaxConnections {
		t.Errorf("default TenantMaxConnections = %d, want %d", got, core.DefaultTenantMaxConnections)
	}
	for range core.DefaultTenantMaxConnections {
		hold(t, f.svc, core.Caller{Tenant: "alice"})
	}
	_, err := f.svc.HoldConnection(core.Caller{Tenant: "alice"})
	checkErr(t, "one over the default", err, core.KindTooMany, "too_many_connections")

	off := newFixture(t, core.Config{TenantMaxConnections: -1})
	for range 1000 {
		hold(t, off.svc, core.Caller{Tenant: "alice"})
	}
}
