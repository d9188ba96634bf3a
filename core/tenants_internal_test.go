package core

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func newTestTenants(c *fakeClock, rate float64, burst int) *tenants {
	return newTenants(Config{Now: c.Now, TenantRate: rate, TenantBurst: burst, TenantMaxRuns: 1, TenantMaxSessions: 1})
}

// Idle tenants are forgotten; busy ones are kept however idle.
func TestTenantsEvictIdle(t *testing.T) {
	c := &fakeClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	ts := newTestTenants(c, 20, 40)
	for i := range 1000 {
		if _, err := ts.allow(fmt.Sprintf("subject-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	done, _, err := ts.startRun(t.Context(), "busy", time.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name    string
		advance time.Duration
		touch   string
		want    int
	}{
		{"all fresh", 0, "", 1001},
		{"idle 4 min: kept", 4 * time.Minute, "subject-0", 1001},
		{"idle 6 min: swept, the touched and busy ones kept", 2 * time.Minute, "subject-1", 3},
		{"busy idle for an hour: kept", time.Hour, "subject-2", 2},
	}
	for _, st := range steps {
		c.Advance(st.advance)
		if st.touch != "" {
			if _, err := ts.allow(st.touch); err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
		}
		if got := ts.len(); got != st.want {
			t.Errorf("%s: %d tenants, want %d", st.name, got, st.want)
		}
	}
	done()
	c.Advance(time.Hour)
	_, _ = ts.allow("x")
	if got := ts.len(); got != 1 {
		t.Errorf("after the busy tenant finished and idled: %d tenants, want 1", got)
	}
}

// A slow bucket is kept until it would have refilled.
func TestTenantsIdleCoversRefill(t *testing.T) {
	c := &fakeClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	ts := newTestTenants(c, 0.01, 10) // 1000 s to refill
	if got, want := ts.idle, 1000*time.Second; got != want {
		t.Errorf("idle = %s, want %s", got, want)
	}
}

func TestTenantsTableFull(t *testing.T) {
	c := &fakeClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	ts := newTestTenants(c, 20, 40)
	ts.max = 2
	for _, name := range []string{"a", "b"} {
		if _, err := ts.allow(name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ts.allow("c"); !errors.Is(err, ErrTooManyTenants) {
		t.Errorf("third tenant: %v, want ErrTooManyTenants", err)
	}
	if _, err := ts.allow("a"); err != nil {
		t.Errorf("known tenant refused: %v", err)
	}
	c.Advance(10 * time.Minute)
	if _, err := ts.allow("c"); err != nil {
		t.Errorf("third tenant once the others idled: %v", err)
	}
}

// A tenant holding a connection is kept however idle: sweeping it would
// reset its count and let it past the limit.
func TestTenantsKeepHolders(t *testing.T) {
	c := &fakeClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	ts := newTenants(Config{Now: c.Now, TenantMaxConnections: 1})
	release, err := ts.hold("alice")
	if err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Hour)
	_, _ = ts.allow("bob") // sweeps
	if _, err := ts.hold("alice"); !errors.Is(err, ErrTooManyConnections) {
		t.Errorf("second hold after an idle hour: %v, want ErrTooManyConnections", err)
	}
	release()
	c.Advance(time.Hour)
	_, _ = ts.allow("bob")
	if got := ts.len(); got != 1 {
		t.Errorf("after alice released and idled: %d tenants, want 1", got)
	}
}
