package egress

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

var proxyAddr = netip.MustParseAddr("10.200.0.1")

// testDNS runs p's DNS responder on 127.0.0.1 and returns its address;
// the cleanup closes p and waits for ServeDNS to return.
func testDNS(t *testing.T, p *Proxy) string {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.ServeDNS(pc, proxyAddr) }()
	t.Cleanup(func() {
		_ = p.Close()
		if err := <-done; !errors.Is(err, net.ErrClosed) {
			t.Errorf("ServeDNS returned %v, want net.ErrClosed", err)
		}
	})
	return pc.LocalAddr().String()
}

// query sends one question and returns the answer's header and A records.
func query(t *testing.T, c net.Conn, id uint16, name string, typ dnsmessage.Type, class dnsmessage.Class) (dnsmessage.Header, []string) {
	t.Helper()
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: id, RecursionDesired: true})
	_ = b.StartQuestions()
	if err := b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName(name), Type: typ, Class: class}); err != nil {
		t.Fatal(err)
	}
	msg, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return exchange(t, c, msg, id)
}

func exchange(t *testing.T, c net.Conn, msg []byte, id uint16) (dnsmessage.Header, []string) {
	t.Helper()
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	var m dnsmessage.Message
	if err := m.Unpack(buf[:n]); err != nil {
		t.Fatalf("the answer does not parse: %v", err)
	}
	if m.Header.ID != id || !m.Header.Response {
		t.Fatalf("answer header %+v, want a response to id %d", m.Header, id)
	}
	var as []string
	for _, a := range m.Answers {
		r, ok := a.Body.(*dnsmessage.AResource)
		if !ok {
			t.Fatalf("answer %v is not an A record", a)
		}
		as = append(as, netip.AddrFrom4(r.A).String()+" "+a.Header.Name.String())
	}
	return m.Header, as
}

func TestDNSAnswersAllowedNamesOnly(t *testing.T) {
	pol := mustPolicy(t, []string{"api.test", "*.cdn.test:443", "half.test:80,443", "gone.test:443"},
		[]string{"bad.cdn.test", "half.test:443", "gone.test:443"})
	p, err := New(Config{Sandbox: "sbx-dns", Policy: pol, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("udp4", testDNS(t, p))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	in := dnsmessage.ClassINET
	tests := []struct {
		name  string
		q     string
		typ   dnsmessage.Type
		class dnsmessage.Class
		rcode dnsmessage.RCode
		as    []string
	}{
		{"allowed A", "api.test.", dnsmessage.TypeA, in, dnsmessage.RCodeSuccess, []string{"10.200.0.1 api.test."}},
		{"case and the question's spelling", "API.Test.", dnsmessage.TypeA, in, dnsmessage.RCodeSuccess, []string{"10.200.0.1 API.Test."}},
		{"allowed AAAA has no record", "api.test.", dnsmessage.TypeAAAA, in, dnsmessage.RCodeSuccess, nil},
		{"allowed MX has no record", "api.test.", dnsmessage.TypeMX, in, dnsmessage.RCodeSuccess, nil},
		{"wildcard", "a.b.cdn.test.", dnsmessage.TypeA, in, dnsmessage.RCodeSuccess, []string{"10.200.0.1 a.b.cdn.test."}},
		{"a port left by the denylist", "half.test.", dnsmessage.TypeA, in, dnsmessage.RCodeSuccess, []string{"10.200.0.1 half.test."}},
		{"not allowed", "evil.test.", dnsmessage.TypeA, in, dnsmessage.RCodeNameError, nil},
		{"not allowed AAAA", "evil.test.", dnsmessage.TypeAAAA, in, dnsmessage.RCodeNameError, nil},
		{"wildcard's own suffix", "cdn.test.", dnsmessage.TypeA, in, dnsmessage.RCodeNameError, nil},
		{"denied", "bad.cdn.test.", dnsmessage.TypeA, in, dnsmessage.RCodeNameError, nil},
		{"every port denied", "gone.test.", dnsmessage.TypeA, in, dnsmessage.RCodeNameError, nil},
		{"an address as a name", "10.0.0.1.", dnsmessage.TypeA, in, dnsmessage.RCodeNameError, nil},
		{"root", ".", dnsmessage.TypeA, in, dnsmessage.RCodeNameError, nil},
		{"not class IN", "api.test.", dnsmessage.TypeA, dnsmessage.ClassCHAOS, dnsmessage.RCodeNotImplemented, nil},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, as := query(t, c, uint16(100+i), tt.q, tt.typ, tt.class)
			if h.RCode != tt.rcode || !slices.Equal(as, tt.as) {
				t.Errorf("%s %v: rcode %v, answers %q; want %v, %q", tt.q, tt.typ, h.RCode, as, tt.rcode, tt.as)
			}
		})
	}
	if got := p.Stats().Refused; len(got) != 1 || got[ReasonDNSRefused] != 7 {
		t.Errorf("refused %v, want dns_refused 7 (the NXDOMAIN answers)", got)
	}
}

func TestDNSMalformed(t *testing.T) {
	p, err := New(Config{Policy: mustPolicy(t, []string{"api.test"}, nil), Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("udp4", testDNS(t, p))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Not a message, then a response: no answer; the next query is
	// answered, so the responder read past both.
	for _, junk := range [][]byte{{1, 2, 3}, {0, 9, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0}} {
		if _, err := c.Write(junk); err != nil {
			t.Fatal(err)
		}
	}
	two := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 7})
	_ = two.StartQuestions()
	for _, n := range []string{"api.test.", "api.test."} {
		_ = two.Question(dnsmessage.Question{Name: dnsmessage.MustNewName(n), Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET})
	}
	msg, _ := two.Finish()
	if h, as := exchange(t, c, msg, 7); h.RCode != dnsmessage.RCodeFormatError || as != nil {
		t.Errorf("two questions: rcode %v answers %q, want FORMERR and none", h.RCode, as)
	}
	if h, as := query(t, c, 8, "api.test.", dnsmessage.TypeA, dnsmessage.ClassINET); h.RCode != dnsmessage.RCodeSuccess || len(as) != 1 {
		t.Errorf("after junk: rcode %v answers %q", h.RCode, as)
	}
}

// TestDNSGoResolver: a stub resolver (Go's own) gets the proxy's
// address for an allowed name and "not found" for any other, and the
// refusal is logged with its name.
func TestDNSGoResolver(t *testing.T) {
	logs := &logBuffer{}
	p, err := New(Config{Sandbox: "sbx-dns", Policy: mustPolicy(t, []string{"pypi.test"}, nil), Logger: newTextLogger(logs)})
	if err != nil {
		t.Fatal(err)
	}
	addr := testDNS(t, p)
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "udp4", addr)
	}}
	got, err := r.LookupHost(t.Context(), "pypi.test")
	if err != nil || !slices.Equal(got, []string{"10.200.0.1"}) {
		t.Errorf("LookupHost(pypi.test) = %v, %v; want [10.200.0.1]", got, err)
	}
	_, err = r.LookupHost(t.Context(), "exfil.evil.test")
	var de *net.DNSError
	if !errors.As(err, &de) || !de.IsNotFound {
		t.Errorf("LookupHost(exfil.evil.test) error %v, want not found", err)
	}
	if l := logs.String(); !strings.Contains(l, "reason=dns_refused") || !strings.Contains(l, "target=\"exfil.evil.test A\"") ||
		!strings.Contains(l, "sandbox_id=sbx-dns") {
		t.Errorf("log %q, want the refusal with its name", l)
	}
}
