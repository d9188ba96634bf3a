package core

import (
	"cmp"
	"fmt"
	"math"
	"net/netip"
	"sync"
	"time"
)

// Defaults for zero failed-authentication limits in Config.
const (
	DefaultAuthFailureLimit  = 10
	DefaultAuthFailureWindow = time.Minute
)

// Bounds on the failed-authentication table.
const (
	// maxFailingClients caps the addresses tracked (about 100 bytes each).
	maxFailingClients = 50_000
	// evictScan is how many entries a full table looks at for one it may
	// drop; blocked addresses are never dropped before they are forgiven.
	evictScan = 64
)

// authFailures counts the failed authentications of each client address
// as a debt that decays: an address may owe limit failures, and one is
// forgiven every per. An address at its limit is refused before its
// token is read. Successful authentications neither count nor refill.
type authFailures struct {
	now    func() time.Time
	limit  int // 0: off
	window time.Duration
	per    time.Duration // window / limit
	max    int

	mu        sync.Mutex
	m         map[netip.Prefix]*failures
	lastSweep time.Time
}

// failures is one address's debt of failed authentications as of at.
type failures struct {
	debt float64
	at   time.Time
}

// newAuthFailures applies cfg's limits: zero takes the defaults, a
// negative limit turns the check off.
func newAuthFailures(cfg Config) *authFailures {
	a := &authFailures{now: cfg.Now, max: maxFailingClients, m: map[netip.Prefix]*failures{}}
	a.lastSweep = a.now()
	if cfg.AuthFailureLimit < 0 {
		return a
	}
	a.limit = cmp.Or(cfg.AuthFailureLimit, DefaultAuthFailureLimit)
	a.window = cfg.AuthFailureWindow
	if a.window <= 0 {
		a.window = DefaultAuthFailureWindow
	}
	a.per = max(a.window/time.Duration(a.limit), time.Nanosecond)
	return a
}

// PeerAddr is the address of a connection's peer as net/http gives it
// (http.Request.RemoteAddr: "host:port", or a bare address), the zero
// Addr when it cannot be parsed. A door passes the TCP peer, never a
// forwarding header a client can write.
func PeerAddr(remoteAddr string) netip.Addr {
	if ap, err := netip.ParseAddrPort(remoteAddr); err == nil {
		return ap.Addr()
	}
	addr, _ := netip.ParseAddr(remoteAddr)
	return addr
}

// clientKey is the address failures are counted against: the peer's
// IPv4 address, or its IPv6 /64, since one host commonly holds a whole
// /64. The zero (unparsable) address maps to the zero prefix, shared by
// all such peers.
func clientKey(addr netip.Addr) netip.Prefix {
	if !addr.IsValid() {
		return netip.Prefix{}
	}
	addr = addr.Unmap().WithZone("")
	bits := 32
	if addr.Is6() {
		bits = 64
	}
	p, _ := addr.Prefix(bits)
	return p
}

// blocked returns how long the client must wait before a token of its is
// read again, or zero.
func (a *authFailures) blocked(client netip.Prefix) time.Duration {
	if a.limit == 0 {
		return 0
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	f, ok := a.m[client]
	if !ok {
		return 0
	}
	return a.waitLocked(f, a.now())
}

// fail counts one failed authentication for client and reports whether
// that used up its allowance.
func (a *authFailures) fail(client netip.Prefix) (nowBlocked bool) {
	if a.limit == 0 {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	if now.Sub(a.lastSweep) >= sweepEvery {
		a.sweepLocked(now)
	}
	f, ok := a.m[client]
	if !ok {
		if len(a.m) >= a.max && !a.evictLocked(now) {
			return false // every entry scanned is blocked: keep them, track no more
		}
		f = &failures{at: now}
		a.m[client] = f
	}
	f.debt = a.debtLocked(f, now) + 1
	f.at = now
	return a.waitLocked(f, now) > 0
}

// debtLocked is f's debt at now, after forgiveness.
func (a *authFailures) debtLocked(f *failures, now time.Time) float64 {
	forgiven := float64(now.Sub(f.at)) / float64(a.per)
	return max(f.debt-max(forgiven, 0), 0)
}

// waitLocked is how long until f owes fewer than limit failures.
func (a *authFailures) waitLocked(f *failures, now time.Time) time.Duration {
	over := a.debtLocked(f, now) - float64(a.limit-1)
	if over <= 0 {
		return 0
	}
	return time.Duration(over * float64(a.per))
}

// sweepLocked forgets the addresses whose debt is paid.
func (a *authFailures) sweepLocked(now time.Time) {
	a.lastSweep = now
	for client, f := range a.m {
		if a.debtLocked(f, now) == 0 {
			delete(a.m, client)
		}
	}
}

// evictLocked drops one of the first evictScan entries (in the map's
// random order) that is not blocked, and reports whether it found one.
func (a *authFailures) evictLocked(now time.Time) bool {
	n := 0
	for client, f := range a.m {
		if a.waitLocked(f, now) == 0 {
			delete(a.m, client)
			return true
		}
		if n++; n >= evictScan {
			break
		}
	}
	return false
}

// refusal is the error for a client that must wait before a token of
// its is read again.
func (a *authFailures) refusal(wait time.Duration) *Error {
	return tooMany(ErrAuthFailures, "too_many_auth_failures", fmt.Sprintf("too many failed authentications from your address "+
		"(at most %d per %d s); no token from it is checked until the Retry-After seconds have passed",
		a.limit, max(1, int(math.Ceil(a.window.Seconds())))), wait)
}

// len is how many addresses are tracked.
func (a *authFailures) len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.m)
}
