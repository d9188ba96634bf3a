package discovery

import (
	"context"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// dnsServer is a DNS server on a loopback UDP port that answers SRV
// questions for one name with the targets the test last set, and NXDOMAIN
// when it set none.
type dnsServer struct {
	conn net.PacketConn
	name string

	mu      sync.Mutex
	targets []net.SRV
}

func startDNS(t *testing.T, name string) *dnsServer {
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &dnsServer{conn: conn, name: name}
	t.Cleanup(func() { conn.Close() })
	go s.serve()
	return s
}

func (s *dnsServer) set(targets ...net.SRV) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.targets = targets
}

func (s *dnsServer) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := s.conn.ReadFrom(buf)
		if err != nil {
			return
		}
		if out, err := s.answer(buf[:n]); err == nil {
			_, _ = s.conn.WriteTo(out, from)
		}
	}
}

func (s *dnsServer) answer(query []byte) ([]byte, error) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil, err
	}
	q, err := p.Question()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	targets := s.targets
	s.mu.Unlock()
	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true}
	if q.Type != dnsmessage.TypeSRV || q.Name.String() != s.name || len(targets) == 0 {
		rh.RCode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, rh)
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(q); err != nil {
		return nil, err
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	if rh.RCode == dnsmessage.RCodeSuccess {
		for _, tg := range targets {
			target, err := dnsmessage.NewName(tg.Target)
			if err != nil {
				return nil, err
			}
			err = b.SRVResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 1},
				dnsmessage.SRVResource{Priority: tg.Priority, Weight: tg.Weight, Port: tg.Port, Target: target})
			if err != nil {
				return nil, err
			}
		}
	}
	return b.Finish()
}

// TestSRVRealResolver follows records served by a DNS server on loopback
// through Go's own resolver.
func TestSRVRealResolver(t *testing.T) {
	dns := startDNS(t, "_api._tcp.paddock.test.")
	dns.set(net.SRV{Target: "node-0.paddock.test.", Port: 8080, Weight: 1})
	addr := dns.conn.LocalAddr().String()
	r := &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "udp", addr)
		},
	}
	src := NewSRV(r, SRVConfig{Service: "api", Proto: "tcp", Name: "paddock.test", Interval: 5 * time.Millisecond},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx) }()

	waitNodes(t, src, []Node{{"node-0", "node-0.paddock.test:8080"}})
	dns.set(net.SRV{Target: "node-0.paddock.test.", Port: 8080, Weight: 1}, net.SRV{Target: "node-1.paddock.test.", Port: 8081, Weight: 1})
	waitNodes(t, src, []Node{{"node-0", "node-0.paddock.test:8080"}, {"node-1", "node-1.paddock.test:8081"}})
	dns.set()
	waitNodes(t, src, nil)

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
}
