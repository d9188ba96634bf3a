package egress

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strconv"
)

// open decides a request for host:port and, when it may go on, resolves
// the name once, checks every address and connects to a checked one.
// The connection holds one of the proxy's slots until closed.
func (p *Proxy) open(ctx context.Context, host string, port int) (*upstream, *refusal) {
	if ok, reason := p.current().Decide(host, port); !ok {
		return nil, refused(statusOf(reason), reason, "%s", policyDetail(reason, host, port))
	}
	name, _, _ := normalizeName(host)
	if p.counters.exhausted() {
		return nil, refused(http.StatusTooManyRequests, ReasonByteLimit, "the sandbox has used its egress bytes")
	}
	select {
	case p.slots <- struct{}{}:
	default:
		return nil, refused(http.StatusTooManyRequests, ReasonConnLimit, "the sandbox already has %d egress connections open", p.limits.MaxConns)
	}
	c, ref := p.connect(ctx, name, port)
	if ref != nil {
		<-p.slots
		return nil, ref
	}
	p.counters.conns.Add(1)
	p.metrics.connections.Inc()
	return p.newUpstream(c), nil
}

func policyDetail(reason, host string, port int) string {
	target := net.JoinHostPort(host, strconv.Itoa(port))
	switch reason {
	case ReasonDenied:
		return target + " is denied by the operator"
	case ReasonRawIP:
		return host + " is an IP address; ask for a host name"
	case ReasonBadHost:
		return "the host is not a DNS name"
	case ReasonBadPort:
		return "the port is not in 1-65535"
	}
	return target + " is not allowed by the sandbox's egress policy"
}

// connect resolves name, refuses the lot if the guard refuses any
// address, and dials the checked addresses in turn, never the name.
func (p *Proxy) connect(ctx context.Context, name string, port int) (net.Conn, *refusal) {
	ctx, cancel := context.WithTimeout(ctx, p.limits.ConnectTimeout)
	defer cancel()
	stop := context.AfterFunc(p.ctx, cancel)
	defer stop()

	addrs, err := p.resolver.LookupNetIP(ctx, "ip", name+".")
	if err != nil || len(addrs) == 0 {
		if ref := p.ctxRefusal(ctx); ref != nil {
			return nil, ref
		}
		ref := refused(http.StatusBadGateway, ReasonResolveFailed, "%s does not resolve", name)
		ref.attrs = []any{"error", errString(err)}
		return nil, ref
	}
	for _, a := range addrs {
		if err := p.guard.Check(a); err != nil {
			var be *BlockedError
			class := ClassUnspecified
			if errors.As(err, &be) {
				class = be.Class
			}
			ref := refused(http.StatusForbidden, ReasonBlockedAddress, "%s resolves to a %s address", name, class)
			ref.attrs = []any{"addr", a.String(), "class", class}
			return nil, ref
		}
	}
	var errs []error
	for _, a := range addrs {
		target := netip.AddrPortFrom(a.Unmap().WithZone(""), uint16(port)).String()
		c, err := p.dial(ctx, "tcp", target)
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	if ref := p.ctxRefusal(ctx); ref != nil {
		return nil, ref
	}
	ref := refused(http.StatusBadGateway, ReasonConnectFailed, "no address of %s accepted the connection", name)
	ref.attrs = []any{"error", errors.Join(errs...).Error()}
	return nil, ref
}

// ctxRefusal is the refusal for ctx's end: the proxy closing, or the
// connect timeout; nil while ctx is live.
func (p *Proxy) ctxRefusal(ctx context.Context) *refusal {
	switch {
	case p.ctx.Err() != nil:
		return refused(http.StatusBadGateway, ReasonClosed, "the egress proxy is closing")
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return refused(http.StatusBadGateway, ReasonConnectTimeout, "no connection within %s", p.limits.ConnectTimeout)
	case ctx.Err() != nil:
		return refused(http.StatusBadGateway, ReasonClosed, "the request ended")
	}
	return nil
}

func errString(err error) string {
	if err == nil {
		return "no address"
	}
	return err.Error()
}
