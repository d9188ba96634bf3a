package egress

import (
	"errors"
	"net/netip"
	"slices"
	"testing"
)

// fakeHost is the address the guard tests give the host.
var fakeHost = netip.MustParseAddr("93.184.216.34")

func hostIs(addrs ...netip.Addr) func() ([]netip.Addr, error) {
	return func() ([]netip.Addr, error) { return addrs, nil }
}

func TestDefaultGuardRefuses(t *testing.T) {
	g := NewGuard(GuardConfig{HostAddrs: hostIs(fakeHost)})
	tests := []struct {
		addr, class string
	}{
		{"127.0.0.1", ClassLoopback},
		{"127.255.0.9", ClassLoopback},
		{"169.254.169.254", ClassLinkLocal},
		{"169.254.1.1", ClassLinkLocal},
		{"10.1.2.3", ClassPrivate},
		{"172.16.5.4", ClassPrivate},
		{"172.31.255.255", ClassPrivate},
		{"192.168.1.1", ClassPrivate},
		{"100.64.0.1", ClassCGNAT},
		{"100.127.255.254", ClassCGNAT},
		{"224.0.0.1", ClassMulticast},
		{"239.255.255.250", ClassMulticast},
		{"255.255.255.255", ClassBroadcast},
		{"0.0.0.0", ClassThisNetwork},
		{"0.1.2.3", ClassThisNetwork},
		{"192.0.0.8", ClassIETFProtocol},
		{"198.18.0.1", ClassBenchmark},
		{"198.19.255.1", ClassBenchmark},
		{"240.0.0.1", ClassReserved},
		{"192.0.2.1", ClassDocumentation},
		{"::", ClassUnspecified},
		{"::1", ClassLoopback},
		{"fe80::1", ClassLinkLocal},
		{"fe80::1%eth0", ClassLinkLocal},
		{"fc00::1", ClassPrivate},
		{"fd00:ec2::254", ClassPrivate},
		{"ff02::1", ClassMulticast},
		{"2001:db8::1", ClassDocumentation},
		{"100::1", ClassNotGlobal},
		{"::ffff:127.0.0.1", ClassLoopback},
		{"::ffff:169.254.169.254", ClassLinkLocal},
		{"::ffff:10.0.0.1", ClassPrivate},
		{"::7f00:1", ClassIPv4Compatible},
		{"64:ff9b::7f00:1", ClassLoopback},
		{"64:ff9b::a9fe:a9fe", ClassLinkLocal},
		{"64:ff9b::c0a8:101", ClassPrivate},
		{"64:ff9b:1::808:808", ClassReserved},
		{"2002:7f00:1::1", ClassLoopback},
		{"2002:a00:1::1", ClassPrivate},
		{"93.184.216.34", ClassHostAddress},
		{"::ffff:93.184.216.34", ClassHostAddress},
		{"64:ff9b::5db8:d822", ClassHostAddress},
	}
	for _, tc := range tests {
		t.Run(tc.addr, func(t *testing.T) {
			err := g.Check(netip.MustParseAddr(tc.addr))
			var be *BlockedError
			if !errors.As(err, &be) || !errors.Is(err, ErrBlockedAddress) {
				t.Fatalf("Check(%s) = %v, want a BlockedError", tc.addr, err)
			}
			if be.Class != tc.class {
				t.Errorf("Check(%s) class %q, want %q", tc.addr, be.Class, tc.class)
			}
		})
	}
}

func TestDefaultGuardAllowsPublic(t *testing.T) {
	g := NewGuard(GuardConfig{HostAddrs: hostIs(fakeHost)})
	for _, a := range []string{
		"8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "169.253.255.255", "198.20.0.1",
		"2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1",
	} {
		if err := g.Check(netip.MustParseAddr(a)); err != nil {
			t.Errorf("Check(%s) = %v, want nil", a, err)
		}
	}
}

func TestGuardFailsClosed(t *testing.T) {
	g := NewGuard(GuardConfig{HostAddrs: func() ([]netip.Addr, error) { return nil, errors.New("no netlink") }})
	var be *BlockedError
	if err := g.Check(netip.MustParseAddr("8.8.8.8")); !errors.As(err, &be) || be.Class != ClassHostUnknown {
		t.Errorf("Check with unknown host addresses = %v, want %s", err, ClassHostUnknown)
	}
	if err := g.Check(netip.Addr{}); !errors.As(err, &be) || be.Class != ClassUnspecified {
		t.Errorf("Check(invalid) = %v, want %s", err, ClassUnspecified)
	}
}

func TestGuardDefaultListsInterfaces(t *testing.T) {
	own, err := interfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(own, netip.MustParseAddr("127.0.0.1")) {
		t.Fatalf("interface addresses %v lack 127.0.0.1", own)
	}
	// With loopback's block lifted, the default host list still refuses it.
	g := NewGuard(GuardConfig{Blocks: WithoutBlock(DefaultBlocks(), netip.MustParseAddr("127.0.0.1"))})
	var be *BlockedError
	if err := g.Check(netip.MustParseAddr("127.0.0.1")); !errors.As(err, &be) || be.Class != ClassHostAddress {
		t.Errorf("Check(127.0.0.1) = %v, want %s", err, ClassHostAddress)
	}
}

func TestWithoutBlock(t *testing.T) {
	all := DefaultBlocks()
	less := WithoutBlock(all, netip.MustParseAddr("127.0.0.1"))
	if len(less) != len(all)-1 {
		t.Fatalf("WithoutBlock dropped %d blocks, want 1", len(all)-len(less))
	}
	g := NewGuard(GuardConfig{Blocks: less, HostAddrs: hostIs()})
	if err := g.Check(netip.MustParseAddr("127.0.0.1")); err != nil {
		t.Errorf("127.0.0.1 with its block lifted: %v", err)
	}
	if err := g.Check(netip.MustParseAddr("10.0.0.1")); err == nil {
		t.Error("10.0.0.1 allowed with only loopback lifted")
	}
}
