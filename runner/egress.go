package runner

import "net"

// The inside shape of every networked sandbox (Spec.Network): one
// interface at SandboxAddr/30 whose default route, and only peer, is
// EgressAddr, where the runtime listens at EgressPort for the sandbox's
// egress proxy. Every networked sandbox has the same shape, so that a
// snapshot of one restores into any other.
const (
	SandboxAddr = "10.200.0.2"
	EgressAddr  = "10.200.0.1"
	EgressPort  = 3128
)

// Egress is a sandbox with a network: EgressListener is the one listener
// its traffic can reach, at EgressAddr:EgressPort on the host side,
// reachable from that sandbox alone; nil when the sandbox has no network.
// Whoever leases the sandbox serves an egress proxy on it; the runtime
// closes it when the sandbox is destroyed.
type Egress interface {
	EgressListener() net.Listener
}
