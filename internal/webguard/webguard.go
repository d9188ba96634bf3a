// Package webguard keeps web pages in a browser from driving Paddock.
//
// Two attacks need no credential when authentication is off, and both
// reach a Paddock listening on the visitor's own machine:
//
//   - a cross-site request: a page on another origin posts to Paddock
//     (a form or fetch with a "simple" content type needs no CORS
//     preflight, so the request is sent even though its answer cannot
//     be read);
//   - DNS rebinding: a page whose name was rebound to 127.0.0.1 sends
//     same-origin requests to the local port.
//
// Browsers mark both: the first with an Origin header that is not the
// request's own host, the second with a Host header that is not a
// loopback name. Clients that are not browsers send neither mark, so
// they pass unchanged.
package webguard

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// Guard checks requests. Its zero value allows only loopback names on
// loopback connections and only same-origin browser requests.
type Guard struct {
	hosts   map[string]bool
	origins map[string]bool
}

// New returns a guard that also accepts the Host values in hosts (host,
// or host:port) on loopback connections, and browser requests from the
// origins in origins (scheme://host[:port]).
func New(hosts, origins []string) (*Guard, error) {
	g := &Guard{hosts: map[string]bool{}, origins: map[string]bool{}}
	for _, h := range hosts {
		g.hosts[strings.ToLower(h)] = true
	}
	for _, o := range origins {
		norm, ok := normalOrigin(o)
		if !ok {
			return nil, fmt.Errorf("allowed origin %q: want scheme://host[:port], e.g. https://notebooks.example.com", o)
		}
		g.origins[norm] = true
	}
	return g, nil
}

// Refusal says why a request was refused. Code is one of the codes below.
type Refusal struct {
	Code    string
	Message string
}

// The refusal codes.
const (
	CodeHost   = "forbidden_host"
	CodeOrigin = "forbidden_origin"
)

// Check returns why r must be refused, or nil. local is the address the
// connection was accepted on (http.LocalAddrContextKey), nil if unknown.
func (g *Guard) Check(r *http.Request, local net.Addr) *Refusal {
	if local != nil && Loopback(local.String()) && !Loopback(r.Host) && !g.allowsHost(r.Host) {
		return &Refusal{Code: CodeHost, Message: fmt.Sprintf(
			"Host %q is refused on a loopback connection (DNS-rebinding protection); a reverse proxy on this machine "+
				"must forward a Host named in --allowed-hosts (PADDOCK_ALLOWED_HOSTS)", r.Host)}
	}
	if safe(r.Method) {
		// Nothing a GET does changes state, and without CORS headers a
		// page cannot read the answer. WebSocket upgrades are GETs too:
		// the door that accepts them checks their Origin itself.
		return nil
	}
	origin := r.Header.Get("Origin")
	if origin == "" || g.allowsOrigin(origin, r) {
		return nil
	}
	return &Refusal{Code: CodeOrigin, Message: fmt.Sprintf(
		"a browser page from origin %q may not send %s requests here (cross-site request protection); "+
			"list the origin in --allowed-origins (PADDOCK_ALLOWED_ORIGINS) to let it", origin, r.Method)}
}

func safe(method string) bool {
	return method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions
}

func (g *Guard) allowsHost(host string) bool {
	host = strings.ToLower(host)
	if g.hosts[host] {
		return true
	}
	name, _, err := net.SplitHostPort(host)
	return err == nil && g.hosts[name]
}

// allowsOrigin reports whether origin is the request's own (same host
// and port) or a listed one. "null" (sandboxed frames, file: pages) is
// never the request's own.
func (g *Guard) allowsOrigin(origin string, r *http.Request) bool {
	norm, ok := normalOrigin(origin)
	if !ok {
		return false
	}
	if g.origins[norm] {
		return true
	}
	u, _ := url.Parse(norm)
	return u.Host == hostPort(strings.ToLower(r.Host), u.Scheme)
}

// normalOrigin lower-cases an origin and drops its scheme's default port.
func normalOrigin(o string) (string, bool) {
	u, err := url.Parse(strings.ToLower(strings.TrimSpace(o)))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", false
	}
	return u.Scheme + "://" + hostPort(u.Host, u.Scheme), true
}

// hostPort drops the scheme's default port from host:port.
func hostPort(host, scheme string) string {
	if (scheme == "http" && strings.HasSuffix(host, ":80")) || (scheme == "https" && strings.HasSuffix(host, ":443")) {
		return host[:strings.LastIndexByte(host, ':')]
	}
	return host
}

// Loopback reports whether a host or host:port names the local machine:
// localhost (or a name under .localhost) or a loopback IP.
func Loopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}
