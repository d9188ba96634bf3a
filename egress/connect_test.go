package egress

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func TestConnectTunnelsBothWays(t *testing.T) {
	port := tcpUpstream(t, echo)
	res := &fakeResolver{names: map[string][]netip.Addr{"api.test": {loopback}}}
	p, addr, _ := testProxy(t, Config{Policy: policyFor(t, port, "api.test"), Resolver: res})

	c, br, resp := connect(t, addr, "api.test:"+strconv.Itoa(port))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT status %d", resp.StatusCode)
	}
	if _, err := io.WriteString(c, "ping through the tunnel"); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len("ping through the tunnel"))
	if _, err := io.ReadFull(br, got); err != nil {
		t.Fatal(err)
	}
	if string(got) != "ping through the tunnel" {
		t.Fatalf("echo = %q", got)
	}
	s := p.Stats()
	if s.Connections != 1 || s.BytesOut != 23 || s.BytesIn != 23 || s.Refused != nil {
		t.Errorf("Stats = %+v, want 1 connection, 23 bytes each way, no refusal", s)
	}
	if res.count() != 1 {
		t.Errorf("resolved %d times, want 1", res.count())
	}
}

func TestConnectRefusals(t *testing.T) {
	port := tcpUpstream(t, echo)
	ps := strconv.Itoa(port)
	res := &fakeResolver{names: map[string][]netip.Addr{
		"api.test":      {loopback},
		"evil.api.test": {loopback},
		"internal.test": {netip.MustParseAddr("10.0.0.7")},
		"mixed.test":    {netip.MustParseAddr("8.8.8.8"), netip.MustParseAddr("10.0.0.8")},
		"a.svc.test":    {loopback},
		"svc.test":      {loopback},
		"metadata.test": {netip.MustParseAddr("169.254.169.254")},
		"mapped.test":   {netip.MustParseAddr("::ffff:10.1.1.1")},
	}}
	pol := mustPolicy(t,
		[]string{"api.test:" + ps, "*.api.test:" + ps, "*.svc.test:" + ps, "internal.test:" + ps, "mixed.test:" + ps, "metadata.test:" + ps, "mapped.test:" + ps, "nowhere.test:" + ps},
		[]string{"evil.api.test"})
	// The default blocks, but with the test's loopback upstream lifted, so
	// that only the ranges under test refuse.
	_, addr, logs := testProxy(t, Config{Policy: pol, Resolver: res})

	tests := []struct {
		name, target string
		status       int
		reason       string
		bodyHas      string
	}{
		{"not allowed", "other.test:" + ps, 403, ReasonNotAllowed, "other.test:" + ps + " is not allowed"},
		{"allowed name, other port", "api.test:22", 403, ReasonNotAllowed, "is not allowed"},
		{"deny wins over allow", "evil.api.test:" + ps, 403, ReasonDenied, "denied by the operator"},
		{"raw IPv4", "127.0.0.1:" + ps, 403, ReasonRawIP, "is an IP address"},
		{"raw IPv6", "[::1]:" + ps, 403, ReasonRawIP, "is an IP address"},
		{"wildcard is not the apex", "svc.test:" + ps, 403, ReasonNotAllowed, "is not allowed"},
		{"no port", "api.test", 400, ReasonBadPort, "is not host:port"},
		{"bad name", "bad_name.test:" + ps, 400, ReasonBadHost, "not a DNS name"},
		{"private address", "internal.test:" + ps, 403, ReasonBlockedAddress, "resolves to a private address"},
		{"one blocked address of two", "mixed.test:" + ps, 403, ReasonBlockedAddress, "resolves to a private address"},
		{"metadata address", "metadata.test:" + ps, 403, ReasonBlockedAddress, "resolves to a link_local address"},
		{"mapped private", "mapped.test:" + ps, 403, ReasonBlockedAddress, "resolves to a private address"},
		{"does not resolve", "nowhere.test:" + ps, 502, ReasonResolveFailed, "does not resolve"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, resp := connect(t, addr, tc.target)
			body := readBody(t, resp)
			wantRefused(t, resp, body, tc.status, tc.reason)
			if !strings.Contains(body, tc.bodyHas) {
				t.Errorf("body %q, want it to say %q", body, tc.bodyHas)
			}
			for _, leak := range []string{"10.0.0.7", "10.0.0.8", "169.254", "10.1.1.1", "8.8.8.8"} {
				if strings.Contains(body, leak) {
					t.Errorf("body %q names the resolved address %s", body, leak)
				}
			}
		})
	}
	// The log keeps what the answer leaves out: the address and the sandbox.
	if !strings.Contains(logs.String(), "addr=10.0.0.8") || !strings.Contains(logs.String(), "sandbox_id=sbx-test") {
		t.Errorf("log lacks the refused address or the sandbox:\n%s", logs)
	}

	// The wildcard covers a subdomain.
	_, _, resp := connect(t, addr, "a.svc.test:"+ps)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("a.svc.test: status %d, want 200", resp.StatusCode)
	}
}

func TestConnectDefaultGuardRefusesLoopback(t *testing.T) {
	port := tcpUpstream(t, echo)
	ps := strconv.Itoa(port)
	res := &fakeResolver{names: map[string][]netip.Addr{
		"api.test":   {loopback},
		"v6.test":    {netip.MustParseAddr("::1")},
		"nat64.test": {netip.MustParseAddr("64:ff9b::7f00:1")},
	}}
	dialed := 0
	var mu sync.Mutex
	dial := func(ctx context.Context, network, address string) (net.Conn, error) {
		mu.Lock()
		dialed++
		mu.Unlock()
		return (&net.Dialer{}).DialContext(ctx, network, address)
	}
	_, addr, _ := testProxy(t, Config{
		Policy: policyFor(t, port, "api.test", "v6.test", "nat64.test"), Resolver: res, Dial: dial,
		Guard: NewGuard(GuardConfig{}), // the real default: blocks and host addresses
	})
	for _, name := range []string{"api.test", "v6.test", "nat64.test"} {
		_, _, resp := connect(t, addr, name+":"+ps)
		body := readBody(t, resp)
		wantRefused(t, resp, body, 403, ReasonBlockedAddress)
		if !strings.Contains(body, "loopback") {
			t.Errorf("%s: body %q, want it to name loopback", name, body)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if dialed != 0 {
		t.Errorf("dialled %d times, want none", dialed)
	}
}

// TestConnectDialsOnlyWhatItChecked: a rebinding resolver answers a
// public address first and 127.0.0.1 after; the proxy resolves once and
// dials the public address it checked, never the name.
func TestConnectDialsOnlyWhatItChecked(t *testing.T) {
	port := tcpUpstream(t, echo)
	public := netip.MustParseAddr("8.8.8.8")
	res := &fakeResolver{answer: func(_ context.Context, call int, host string) ([]netip.Addr, error) {
		if call == 1 {
			return []netip.Addr{public}, nil
		}
		return []netip.Addr{loopback}, nil
	}}
	var mu sync.Mutex
	var dialed []string
	dial := func(ctx context.Context, network, address string) (net.Conn, error) {
		mu.Lock()
		dialed = append(dialed, address)
		mu.Unlock()
		// 8.8.8.8 stands for the upstream: connect to the stand-in.
		return (&net.Dialer{}).DialContext(ctx, network, "127.0.0.1:"+strconv.Itoa(port))
	}
	_, addr, _ := testProxy(t, Config{
		Policy: policyFor(t, port, "rebind.test"), Resolver: res, Dial: dial,
		Guard: NewGuard(GuardConfig{HostAddrs: hostIs()}), // loopback refused
	})
	c, br, resp := connect(t, addr, "rebind.test:"+strconv.Itoa(port))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if _, err := io.WriteString(c, "x"); err != nil {
		t.Fatal(err)
	}
	if b, err := br.ReadByte(); err != nil || b != 'x' {
		t.Fatalf("echo %q %v", b, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := "8.8.8.8:" + strconv.Itoa(port); len(dialed) != 1 || dialed[0] != want {
		t.Errorf("dialled %v, want [%s]", dialed, want)
	}
	if res.count() != 1 {
		t.Errorf("resolved %d times, want 1", res.count())
	}
}

// TestConnectHalfClose: the client's end of stream reaches the upstream,
// which answers after it, and the upstream's end reaches the client.
func TestConnectHalfClose(t *testing.T) {
	port := tcpUpstream(t, func(c net.Conn) {
		n, _ := io.Copy(io.Discard, c)
		_, _ = io.WriteString(c, "got "+strconv.Itoa(int(n)))
	})
	res := &fakeResolver{names: map[string][]netip.Addr{"api.test": {loopback}}}
	_, addr, _ := testProxy(t, Config{Policy: policyFor(t, port, "api.test"), Resolver: res})
	c, br, resp := connect(t, addr, "api.test:"+strconv.Itoa(port))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if _, err := io.WriteString(c, "12345"); err != nil {
		t.Fatal(err)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(br)
	if err != nil || string(got) != "got 5" {
		t.Errorf("read %q, %v; want \"got 5\"", got, err)
	}
}
