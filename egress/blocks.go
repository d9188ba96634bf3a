package egress

import "net/netip"

// A Block is a range of addresses the guard refuses and the class it
// names in refusals.
type Block struct {
	Class  string
	Prefix netip.Prefix
}

// Address classes of the default blocks, and of the host's own addresses.
const (
	ClassLoopback       = "loopback"
	ClassUnspecified    = "unspecified"
	ClassThisNetwork    = "this_network"
	ClassLinkLocal      = "link_local" // 169.254.169.254, the cloud metadata address, is here
	ClassPrivate        = "private"
	ClassCGNAT          = "cgnat"
	ClassMulticast      = "multicast"
	ClassBroadcast      = "broadcast"
	ClassIETFProtocol   = "ietf_protocol"
	ClassBenchmark      = "benchmark"
	ClassDocumentation  = "documentation"
	ClassReserved       = "reserved"
	ClassIPv4Compatible = "ipv4_compatible"
	ClassNotGlobal      = "not_global" // IPv6 outside 2000::/3
	ClassHostAddress    = "host_address"
	ClassHostUnknown    = "host_addresses_unknown" // the host's addresses could not be listed
)

// DefaultBlocks is every range no sandbox may reach, in the order the
// guard tries them (the first that holds an address names its class).
// IPv4-mapped, IPv4-compatible, 6to4 and NAT64 (64:ff9b::/96) addresses
// are checked against it by the IPv4 address they embed as well.
func DefaultBlocks() []Block {
	list := []struct{ class, prefix string }{
		{ClassBroadcast, "255.255.255.255/32"},
		{ClassThisNetwork, "0.0.0.0/8"},
		{ClassLoopback, "127.0.0.0/8"},
		{ClassPrivate, "10.0.0.0/8"},
		{ClassCGNAT, "100.64.0.0/10"},
		{ClassLinkLocal, "169.254.0.0/16"},
		{ClassPrivate, "172.16.0.0/12"},
		{ClassIETFProtocol, "192.0.0.0/24"},
		{ClassDocumentation, "192.0.2.0/24"},
		{ClassPrivate, "192.168.0.0/16"},
		{ClassBenchmark, "198.18.0.0/15"},
		{ClassDocumentation, "198.51.100.0/24"},
		{ClassDocumentation, "203.0.113.0/24"},
		{ClassMulticast, "224.0.0.0/4"},
		{ClassReserved, "240.0.0.0/4"},
		{ClassUnspecified, "::/128"},
		{ClassLoopback, "::1/128"},
		{ClassIPv4Compatible, "::/96"},
		{ClassReserved, "64:ff9b:1::/48"}, // local-use NAT64 (RFC 8215)
		{ClassDocumentation, "2001:db8::/32"},
		{ClassPrivate, "fc00::/7"},
		{ClassLinkLocal, "fe80::/10"},
		{ClassMulticast, "ff00::/8"},
	}
	blocks := make([]Block, len(list))
	for i, b := range list {
		blocks[i] = Block{Class: b.class, Prefix: netip.MustParsePrefix(b.prefix)}
	}
	return blocks
}

// WithoutBlock is blocks less the ones holding addr: for tests that must
// reach a stand-in upstream on loopback.
func WithoutBlock(blocks []Block, addr netip.Addr) []Block {
	var out []Block
	for _, b := range blocks {
		if !b.Prefix.Contains(addr) {
			out = append(out, b)
		}
	}
	return out
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
	compat    = netip.MustParsePrefix("::/96")
	global6   = netip.MustParsePrefix("2000::/3")
)

// embedded4 is the IPv4 address an IPv6 one carries, in the forms a
// dialler or a translator turns back into IPv4.
func embedded4(a netip.Addr) (netip.Addr, bool) {
	b := a.As16()
	switch {
	case a.Is4In6():
		return a.Unmap(), true
	case nat64.Contains(a), compat.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}
