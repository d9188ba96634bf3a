package runner

import "net"

// The inside shape of every networked sandbox (Spec.Network): one
// interface at SandboxAddr/30 whose default route, and only peer, is
// EgressAddr, where the runtime listens for the sandbox's egress proxy:
// at EgressPort (the proxy the sandbox's proxy variables name), and for
// code that ignores them at DNSPort (the sandbox's nameserver), HTTPPort
// and TLSPort. Every networked sandbox has the same shape, so that a
// snapshot of one restores into any other.
const (
	SandboxAddr = "10.200.0.2"
	EgressAddr  = "10.200.0.1"
	EgressPort  = 3128
	DNSPort     = 53
	HTTPPort    = 80
	TLSPort     = 443
)

// EgressListeners are the sockets a networked sandbox's traffic can
// reach on the host side, at EgressAddr, each reachable from that
// sandbox alone: Proxy at EgressPort, HTTP at HTTPPort, TLS at TLSPort
// (TCP) and DNS at DNSPort (UDP).
type EgressListeners struct {
	Proxy, HTTP, TLS net.Listener
	DNS              net.PacketConn
}

// Egress is a sandbox with a network. EgressListeners are its sockets,
// all nil when the sandbox has no network; EgressListener is their Proxy.
// Whoever leases the sandbox serves an egress proxy on them; the runtime
// closes them when the sandbox is destroyed.
type Egress interface {
	EgressListener() net.Listener
	EgressListeners() EgressListeners
}
