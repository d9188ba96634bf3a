package egress

import (
	"errors"
	"net"
	"net/netip"
	"strings"

	"golang.org/x/net/dns/dnsmessage"
)

// The DNS responder. A sandbox that ignores the proxy variables looks
// names up at its nameserver, the proxy's own address; ServeDNS answers
// an A query for a name the policy allows with that address (the
// transparent listeners there then take the connection), an AAAA or any
// other type for it with no record, and every other name NXDOMAIN
// (counted dns_refused). It never resolves anything: the real
// resolution, and the guard on its answer, happen when the connection
// arrives, as for a proxy request.

// dnsTTL is the answers' time to live: the address never changes.
const dnsTTL = 300

// maxDNSMessage bounds a query read: larger ones are not queries a
// stub resolver sends.
const maxDNSMessage = 4096

// ServeDNS answers DNS queries on pc until Close, with self (the proxy's
// address the sandbox sees) for allowed names; it returns net.ErrClosed
// then.
func (p *Proxy) ServeDNS(pc net.PacketConn, self netip.Addr) error {
	if !self.Is4() {
		_ = pc.Close()
		return errors.New("egress: the DNS responder answers an IPv4 address")
	}
	if !p.hold(pc) {
		_ = pc.Close()
		return net.ErrClosed
	}
	buf := make([]byte, maxDNSMessage)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			if p.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return net.ErrClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		if out := p.answerDNS(buf[:n], self); out != nil {
			_, _ = pc.WriteTo(out, from)
		}
	}
}

// answerDNS is the answer to the query q, or nil for what is not a
// query worth answering (no header, or a response).
func (p *Proxy) answerDNS(q []byte, self netip.Addr) []byte {
	var pr dnsmessage.Parser
	h, err := pr.Start(q)
	if err != nil || h.Response {
		return nil
	}
	resp := dnsmessage.Header{ID: h.ID, Response: true, OpCode: h.OpCode, RecursionDesired: h.RecursionDesired,
		RecursionAvailable: true, Authoritative: true}
	qs, err := pr.AllQuestions()
	if err != nil || len(qs) != 1 {
		resp.RCode = dnsmessage.RCodeFormatError
		return build(resp, nil, nil)
	}
	question := qs[0]
	if h.OpCode != 0 || question.Class != dnsmessage.ClassINET {
		resp.RCode = dnsmessage.RCodeNotImplemented
		return build(resp, &question, nil)
	}
	name := question.Name.String()
	if ok, reason := p.current().DecideName(name); !ok {
		resp.RCode = dnsmessage.RCodeNameError
		host := strings.TrimSuffix(name, ".")
		ref := refused(0, ReasonDNSRefused, "%s is not a name the sandbox's egress policy allows (%s)", host, reason)
		p.note("DNS", host+" "+strings.TrimPrefix(question.Type.String(), "Type"), ref, "egress refused")
		return build(resp, &question, nil)
	}
	var answer *dnsmessage.AResource
	if question.Type == dnsmessage.TypeA || question.Type == dnsmessage.TypeALL {
		answer = &dnsmessage.AResource{A: self.As4()}
	}
	return build(resp, &question, answer)
}

// build writes a message of h with question q and answer a, when not
// nil; nil if it cannot be written.
func build(h dnsmessage.Header, q *dnsmessage.Question, a *dnsmessage.AResource) []byte {
	b := dnsmessage.NewBuilder(make([]byte, 0, 512), h)
	b.EnableCompression()
	if q != nil {
		if b.StartQuestions() != nil || b.Question(*q) != nil {
			return nil
		}
	}
	if a != nil {
		rh := dnsmessage.ResourceHeader{Name: q.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: dnsTTL}
		if b.StartAnswers() != nil || b.AResource(rh, *a) != nil {
			return nil
		}
	}
	out, err := b.Finish()
	if err != nil {
		return nil
	}
	return out
}
