package egress

import (
	"fmt"
	"net"
	"net/netip"
)

// GuardConfig configures a Guard.
type GuardConfig struct {
	// Blocks are the refused ranges; nil means DefaultBlocks. Only tests
	// that reach a stand-in on loopback pass less (see WithoutBlock).
	Blocks []Block
	// HostAddrs lists the host's own addresses, all refused; nil means
	// the addresses of every interface (net.InterfaceAddrs), listed at
	// each check so that a new one counts at once.
	HostAddrs func() ([]netip.Addr, error)
}

// A Guard refuses the addresses a sandbox must not reach. It is safe for
// concurrent use.
type Guard struct {
	blocks    []Block
	hostAddrs func() ([]netip.Addr, error)
}

// NewGuard returns a guard for cfg.
func NewGuard(cfg GuardConfig) *Guard {
	g := &Guard{blocks: cfg.Blocks, hostAddrs: cfg.HostAddrs}
	if g.blocks == nil {
		g.blocks = DefaultBlocks()
	}
	if g.hostAddrs == nil {
		g.hostAddrs = interfaceAddrs
	}
	return g
}

// BlockedError says which class refused an address. It wraps
// ErrBlockedAddress.
type BlockedError struct {
	Addr  netip.Addr
	Class string
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("address %s is %s", e.Addr, e.Class)
}

func (e *BlockedError) Unwrap() error { return ErrBlockedAddress }

// Check returns nil when a sandbox may reach addr, else a *BlockedError.
// An invalid address, or a host whose addresses cannot be listed, is
// refused.
func (g *Guard) Check(addr netip.Addr) error {
	if !addr.IsValid() {
		return &BlockedError{Addr: addr, Class: ClassUnspecified}
	}
	a := addr.WithZone("")
	if class, ok := g.blockedRange(a); ok {
		return &BlockedError{Addr: addr, Class: class}
	}
	own, err := g.hostAddrs()
	if err != nil {
		return &BlockedError{Addr: addr, Class: ClassHostUnknown}
	}
	for _, h := range own {
		h = h.WithZone("")
		if h == a || h.Unmap() == a.Unmap() {
			return &BlockedError{Addr: addr, Class: ClassHostAddress}
		}
		if e, ok := embedded4(a); ok && h.Unmap() == e {
			return &BlockedError{Addr: addr, Class: ClassHostAddress}
		}
	}
	return nil
}

func (g *Guard) blockedRange(a netip.Addr) (string, bool) {
	if class, ok := g.inBlocks(a); ok {
		return class, true
	}
	if e, ok := embedded4(a); ok {
		if class, ok := g.inBlocks(e); ok {
			return class, true
		}
	}
	if a.Is6() && !a.Is4In6() && !nat64.Contains(a) && !global6.Contains(a) {
		return ClassNotGlobal, true
	}
	return "", false
}

func (g *Guard) inBlocks(a netip.Addr) (string, bool) {
	for _, b := range g.blocks {
		if b.Prefix.Contains(a) {
			return b.Class, true
		}
	}
	return "", false
}

func interfaceAddrs() ([]netip.Addr, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				out = append(out, ip.Unmap())
			}
		}
	}
	return out, nil
}
