package egress

import (
	"bytes"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Transparent TLS. A sandbox that ignores the proxy variables connects to
// the proxy's address on port 443 and starts TLS; ServeTLS reads the
// ClientHello (never decrypting anything), decides by the policy on the
// server name it asks for, as for CONNECT name:443, and splices the
// bytes, the hello first, to the checked upstream address. A refusal
// answers a TLS alert (access_denied) and closes; a hello naming no
// server is refused no_sni.

// alertAccessDenied is a plaintext fatal TLS alert, access_denied (49):
// what a refused client reads before the close.
var alertAccessDenied = []byte{21, 3, 1, 0, 2, 2, 49}

// ServeTLS passes TLS connections on ln, which the sandbox reached on
// port, to the server each names, on port, until Close; it returns
// net.ErrClosed then.
func (p *Proxy) ServeTLS(ln net.Listener, port int) error {
	lim := p.limitClients(ln)
	if !p.hold(lim) {
		_ = ln.Close()
		return net.ErrClosed
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := lim.Accept()
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
		wg.Go(func() { p.passTLS(c, port) })
	}
}

// passTLS serves one connection: the hello within the idle timeout, the
// policy, the guard, then the splice.
func (p *Proxy) passTLS(c net.Conn, port int) {
	defer c.Close()
	if !p.track(c) {
		return
	}
	defer p.untrack(c)
	_ = c.SetReadDeadline(time.Now().Add(p.limits.IdleTimeout))
	name, hello, err := peekServerName(c)
	_ = c.SetReadDeadline(time.Time{})
	target := net.JoinHostPort(name, strconv.Itoa(port))
	switch {
	case err != nil:
		p.refuseTLS(c, target, refused(http.StatusBadRequest, ReasonNoSNI, "the connection did not start with a TLS ClientHello"))
		return
	case name == "":
		p.refuseTLS(c, target, refused(http.StatusBadRequest, ReasonNoSNI, "the TLS ClientHello names no server (SNI)"))
		return
	}
	if ref := p.refuseSecretConnect(name); ref != nil {
		p.refuseTLS(c, target, ref)
		return
	}
	up, ref := p.open(p.ctx, name, port)
	if ref != nil {
		p.refuseTLS(c, target, ref)
		return
	}
	defer up.Close()
	if reason := p.pipe(&prefixConn{Conn: c, prefix: bytes.NewReader(hello)}, nil, up); reason != "" {
		p.note("TLS", target, refused(0, reason, "%s", cutDetail(reason)), "egress connection cut")
	}
}

// refuseTLS logs and counts ref, and tells the client access_denied.
func (p *Proxy) refuseTLS(c net.Conn, target string, ref *refusal) {
	p.note("TLS", target, ref, "egress refused")
	_ = c.SetWriteDeadline(time.Now().Add(p.limits.IdleTimeout))
	_, _ = c.Write(alertAccessDenied)
}
