package egress

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// Secret hosts. The operator attaches headers to a host (Config.Secrets);
// the sandbox asks for http://host/ and the proxy, not the sandbox,
// speaks TLS to the host: it sets the headers on the request, verifies
// the host's certificate (Config.SecretRoots, or the system's roots) and
// strips the headers, and any echo of their values, from the answer. So
// a secret travels in clear text only between the sandbox's request and
// the proxy, neither of which has it, and only over TLS beyond the host.
// A CONNECT to a secret host is refused (secret_host): nothing can be
// added inside a tunnel, and the request would reach the host without
// the credentials the operator meant it to have.

// secretTLSPort is the port the proxy speaks TLS to for a plain-HTTP
// request to a secret host: 443 for the sandbox's 80 (or no port), the
// port asked for otherwise.
func secretTLSPort(port int) int {
	if port == 80 {
		return 443
	}
	return port
}

// secretHost reports whether the operator attached headers to host.
func (p *Proxy) secretHost(host string) bool {
	name, _, err := normalizeName(host)
	return err == nil && p.secrets[name] != nil
}

// refuseSecretConnect is the refusal of a CONNECT to a secret host, nil
// for any other host.
func (p *Proxy) refuseSecretConnect(host string) *refusal {
	if !p.secretHost(host) {
		return nil
	}
	name, _, _ := normalizeName(host)
	return refused(http.StatusForbidden, ReasonSecretHost,
		"%s carries the operator's credentials, which cannot be added inside a tunnel: ask for http://%s/ and the proxy speaks HTTPS to it", name, name)
}

// secretConn is the connection a request to a secret host is written
// on: TLS over up, to name verified, after a handshake bounded by the
// connect timeout. It points out's Host at the TLS port.
func (p *Proxy) secretConn(ctx context.Context, up *upstream, name string, port int, out *http.Request) (io.ReadWriter, *refusal) {
	host := name
	if port != 443 {
		host = net.JoinHostPort(name, strconv.Itoa(port))
	}
	out.Host, out.URL.Host, out.URL.Scheme = host, host, "https"
	tc := tls.Client(up, &tls.Config{ServerName: name, RootCAs: p.roots, MinVersion: tls.VersionTLS12})
	ctx, cancel := context.WithTimeout(ctx, p.limits.ConnectTimeout)
	defer cancel()
	stop := context.AfterFunc(p.ctx, cancel)
	defer stop()
	if err := tc.HandshakeContext(ctx); err != nil {
		if reason := up.limit(); reason != "" {
			return nil, refused(statusOf(reason), reason, "%s", cutDetail(reason))
		}
		ref := refused(http.StatusBadGateway, ReasonUpstreamFailed, "the TLS handshake with %s failed (the proxy verifies its certificate)", name)
		ref.attrs = []any{"error", err.Error()}
		return nil, ref
	}
	return tc, nil
}

// checkSecretHeaders refuses a secret header that is not a header: an
// empty or non-token name, a hop-by-hop or framing name the proxy
// manages itself, no value, or a value with a control character.
func checkSecretHeaders(host string, h http.Header) error {
	if len(h) == 0 {
		return fmt.Errorf("%w: secrets for %s: no header", ErrBadConfig, host)
	}
	for k, vs := range h {
		if !isToken(k) {
			return fmt.Errorf("%w: secrets for %s: %q is not a header name", ErrBadConfig, host, k)
		}
		switch http.CanonicalHeaderKey(k) {
		case "Host", "Content-Length", "Connection", "Transfer-Encoding", "Te", "Trailer", "Upgrade", "Keep-Alive", "Expect":
			return fmt.Errorf("%w: secrets for %s: the proxy sets %s itself", ErrBadConfig, host, k)
		}
		if strings.HasPrefix(http.CanonicalHeaderKey(k), "Proxy-") {
			return fmt.Errorf("%w: secrets for %s: Proxy-* headers are the proxy's own", ErrBadConfig, host)
		}
		if len(vs) == 0 {
			return fmt.Errorf("%w: secrets for %s: %s has no value", ErrBadConfig, host, k)
		}
		for _, v := range vs {
			if strings.TrimSpace(v) == "" || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
				return fmt.Errorf("%w: secrets for %s: %s's value is empty or holds a control character", ErrBadConfig, host, k)
			}
		}
	}
	return nil
}

// isToken reports whether s is an HTTP token (RFC 9110 §5.6.2).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// CoversHost reports whether some port of host (an exact name) is
// allowed and not denied: the test for a secret's host, which must be
// one a sandbox may reach.
func (p Policy) CoversHost(host string) bool {
	for _, r := range p.allow {
		for _, port := range r.Ports {
			if ok, _ := p.Decide(host, int(port)); ok {
				return true
			}
		}
	}
	return false
}
