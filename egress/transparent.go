package egress

import (
	"net"
	"net/http"
	"strconv"
)

// Transparent plain HTTP. A sandbox that ignores the proxy variables and
// found a name by the DNS responder connects to the proxy's address on
// port 80 and sends an origin-form request; ServeHost takes its target
// from the Host header and relays it as an absolute-form request to that
// host, with the same policy, guard, limits and refusals.

// ServeHost answers origin-form HTTP requests on ln, which the sandbox
// reached on port, until Close; it returns http.ErrServerClosed then.
// Each request goes to its Host header's name on port.
func (p *Proxy) ServeHost(ln net.Listener, port int) error {
	return p.serveHTTP(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { p.serveHost(w, r, port) }))
}

func (p *Proxy) serveHost(w http.ResponseWriter, r *http.Request, port int) {
	if r.Method == http.MethodConnect || r.URL.IsAbs() || r.URL.Host != "" || r.Host == "" {
		p.refuse(w, r, refused(http.StatusBadRequest, ReasonBadRequest,
			"port %d takes origin-form requests naming their host in the Host header", port))
		return
	}
	host := r.Host
	if h, ps, err := net.SplitHostPort(r.Host); err == nil {
		if ps != strconv.Itoa(port) {
			p.refuse(w, r, refused(http.StatusBadRequest, ReasonBadPort,
				"the Host header names port %s on a connection to port %d", ps, port))
			return
		}
		host = h
	}
	u := *r.URL
	u.Scheme, u.Host = "http", host
	if port != 80 {
		u.Host = net.JoinHostPort(host, strconv.Itoa(port))
	}
	r.URL = &u
	p.serveForward(w, r)
}
