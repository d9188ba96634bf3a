package core

import (
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"
)

func TestClientKey(t *testing.T) {
	tests := []struct {
		remote string
		want   string
	}{
		{"192.0.2.1:1234", "192.0.2.1/32"},
		{"192.0.2.1", "192.0.2.1/32"},
		{"[::ffff:192.0.2.1]:80", "192.0.2.1/32"},
		{"[2001:db8:1:2:3:4:5:6]:443", "2001:db8:1:2::/64"},
		{"2001:db8:1:2::9", "2001:db8:1:2::/64"},
		{"[fe80::1%eth0]:80", "fe80::/64"},
		{"", "invalid Prefix"},
		{"@", "invalid Prefix"},
		{"example.com:80", "invalid Prefix"},
	}
	for _, tc := range tests {
		t.Run(tc.remote, func(t *testing.T) {
			if got := clientKey(PeerAddr(tc.remote)).String(); got != tc.want {
				t.Errorf("clientKey(PeerAddr(%q)) = %s, want %s", tc.remote, got, tc.want)
			}
		})
	}
}

func newTestAuthFailures(c *fakeClock, limit int, window time.Duration, maxClients int) *authFailures {
	a := newAuthFailures(Config{Now: c.Now, AuthFailureLimit: limit, AuthFailureWindow: window})
	a.max = maxClients
	return a
}

func addr(i int) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), 32)
}

// The table never holds more than its cap. A full table drops an address
// that is not blocked to make room; blocked ones are kept until forgiven,
// and when every entry is blocked a new address is not tracked.
func TestAuthFailuresBounded(t *testing.T) {
	c := &fakeClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}

	t.Run("evicts an unblocked address", func(t *testing.T) {
		a := newTestAuthFailures(c, 2, time.Minute, 4)
		for i := range 4 {
			a.fail(addr(i)) // one failure each: not blocked
		}
		a.fail(addr(100))
		a.fail(addr(100))
		if got := a.len(); got != 4 {
			t.Errorf("len = %d, want 4", got)
		}
		if a.blocked(addr(100)) == 0 {
			t.Error("the newcomer that failed twice is not blocked")
		}
	})

	t.Run("keeps blocked addresses", func(t *testing.T) {
		a := newTestAuthFailures(c, 1, time.Minute, 4)
		for i := range 4 {
			if !a.fail(addr(i)) {
				t.Fatalf("address %d not blocked after its one allowed failure", i)
			}
		}
		for i := 100; i < 200; i++ {
			if a.fail(addr(i)) {
				t.Fatalf("address %d tracked in a table full of blocked addresses", i)
			}
		}
		if got := a.len(); got != 4 {
			t.Errorf("len = %d, want 4", got)
		}
		for i := range 4 {
			if got := a.blocked(addr(i)); got != time.Minute {
				t.Errorf("address %d: blocked for %s, want 1m0s", i, got)
			}
		}
	})

	t.Run("forgets forgiven addresses", func(t *testing.T) {
		a := newTestAuthFailures(c, 10, 5*time.Minute, 1000) // one forgiven every 30 s
		for i := range 500 {
			a.fail(addr(i))
		}
		a.fail(addr(0))
		a.fail(addr(0))
		c.Advance(sweepEvery) // 2 failures forgiven: all paid but address 0's third
		a.fail(addr(1))
		if got := a.len(); got != 2 {
			t.Errorf("len after the sweep = %d, want 2 (addresses 0 and 1)", got)
		}
	})
}

// Concurrent failures from many addresses keep the table within its cap
// (run with -race).
func TestAuthFailuresConcurrent(t *testing.T) {
	c := &fakeClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	a := newTestAuthFailures(c, 5, time.Minute, 64)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				p := addr(g*500 + i%100)
				a.blocked(p)
				a.fail(p)
			}
		})
	}
	wg.Wait()
	if got := a.len(); got > 64 {
		t.Errorf("len = %d, want at most 64", got)
	}
}

func TestAuthFailuresDefaults(t *testing.T) {
	c := &fakeClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	tests := []struct {
		limit      int
		window     time.Duration
		wantLimit  int
		wantWindow time.Duration
		wantPer    time.Duration
	}{
		{0, 0, 10, time.Minute, 6 * time.Second},
		{-1, 0, 0, 0, 0},
		{4, 2 * time.Second, 4, 2 * time.Second, 500 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d per %s", tc.limit, tc.window), func(t *testing.T) {
			a := newAuthFailures(Config{Now: c.Now, AuthFailureLimit: tc.limit, AuthFailureWindow: tc.window})
			if a.limit != tc.wantLimit || a.window != tc.wantWindow || a.per != tc.wantPer {
				t.Errorf("limit, window, per = %d, %s, %s; want %d, %s, %s",
					a.limit, a.window, a.per, tc.wantLimit, tc.wantWindow, tc.wantPer)
			}
			if tc.wantLimit == 0 && (a.fail(addr(1)) || a.blocked(addr(1)) != 0 || a.len() != 0) {
				t.Error("an off limit counted a failure")
			}
		})
	}
}
