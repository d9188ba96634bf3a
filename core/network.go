package core

import (
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/netip"
	"strconv"
	"sync"

	"github.com/paddock-dev/paddock/egress"
	"github.com/paddock-dev/paddock/runner"
)

// Network on purpose. A run may ask for a network (RunInput.Network: the
// hosts it means to reach); what it gets is the server's allowance
// narrowed by its request, never more. Its sandbox is then one with a
// network interface whose only peer is an egress proxy the core serves
// for that run alone (egress.Proxy), and the answer says which policy
// applied and what the proxy saw.

// Egress configures networked runs; nil Config.Egress (or a None Allow)
// refuses every request for a network.
type Egress struct {
	// Allow is the server's allowance, its operator-wide denylist in it:
	// the most any run may reach.
	Allow egress.Policy
	// Resolver resolves the names runs ask for; nil is the system's.
	Resolver egress.Resolver
	// Limits bound each run's proxy.
	Limits egress.Limits
	// Secrets are headers the operator attaches to plain-HTTP requests
	// for a host (egress.Config.Secrets); user code never sees them.
	Secrets egress.Secrets
	// SecretRoots verify the secret hosts' certificates; nil is the
	// system's roots.
	SecretRoots *x509.CertPool
	// Metrics are the proxies' shared counters; nil registers none.
	Metrics *egress.Metrics
	Logger  *slog.Logger
}

// NetworkPolicy is the egress policy a networked run got.
type NetworkPolicy = egress.Policy

// NetworkReport is what a networked run's proxy saw, under the policy it
// enforced.
type NetworkReport struct {
	Policy egress.Policy
	egress.Stats
}

// proxyURL is where a networked sandbox finds its proxy.
var proxyURL = "http://" + net.JoinHostPort(runner.EgressAddr, strconv.Itoa(runner.EgressPort))

// networkAllowance is the most any run may reach on this server.
func (s *Service) networkAllowance() egress.Policy {
	if s.cfg.Egress == nil {
		return egress.Policy{}
	}
	return s.cfg.Egress.Allow
}

// planNetwork checks a run's request for a network against allow, the
// most it may reach (allowanceFor), and returns the policy it gets; nil
// when it asked for none.
func (s *Service) planNetwork(allow egress.Policy, asked []string) (*egress.Policy, error) {
	if asked == nil {
		return nil, nil
	}
	if len(asked) == 0 {
		return nil, invalid("invalid_request", "network: name at least one host, or leave network out")
	}
	req, err := egress.NewPolicy(asked, nil)
	if err != nil {
		return nil, invalid("invalid_request", "network: %v", err)
	}
	if allow.None() {
		return nil, noNetwork()
	}
	got := egress.Narrow(allow, req)
	if got.None() {
		return nil, &Error{Kind: KindForbidden, Code: "network_not_allowed",
			Message: fmt.Sprintf("none of the hosts asked for is allowed here (this template and tenant may reach %s)", allow)}
	}
	return &got, nil
}

// withProxy is env with the proxy variables pip, npm, curl and Python's
// and Node's HTTP clients read; the user's own values for them give way.
func withProxy(env map[string]string) map[string]string {
	out := maps.Clone(env)
	if out == nil {
		out = map[string]string{}
	}
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"} {
		out[k] = proxyURL
	}
	for _, k := range []string{"NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"} {
		delete(out, k)
	}
	return out
}

var errNoNetwork = errors.New("this server's runtime gives sandboxes no network")

// egressAddr is the proxy's address as the sandbox sees it: what the DNS
// responder answers for allowed names.
var egressAddr = netip.MustParseAddr(runner.EgressAddr)

// serveEgress serves pol's proxy on sb's egress sockets for one run (the
// proxy port, and the DNS responder and transparent HTTP and TLS
// listeners when the runtime gives them) and returns what ends it, which
// fills report.
// When live is set, it gets the proxy, whose policy its holder may change.
func (s *Service) serveEgress(sb runner.Sandbox, pol egress.Policy, report **NetworkReport, live **egress.Proxy) (func(), error) {
	e, ok := sb.(runner.Egress)
	if !ok || e.EgressListener() == nil {
		return nil, &Error{Kind: KindNotImplemented, Code: "network_unavailable", Message: errNoNetwork.Error(), cause: errNoNetwork}
	}
	cfg := s.cfg.Egress
	p, err := egress.New(egress.Config{Sandbox: sb.ID(), Policy: pol, Resolver: cfg.Resolver, Limits: cfg.Limits, Secrets: cfg.Secrets,
		SecretRoots: cfg.SecretRoots,
		Metrics:     cfg.Metrics, Logger: cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("starting the egress proxy of %s: %w", sb.ID(), err)
	}
	if live != nil {
		*live = p
	}
	ls := e.EgressListeners()
	var served sync.WaitGroup
	served.Go(func() { _ = p.Serve(e.EgressListener()) })
	if ls.HTTP != nil {
		served.Go(func() { _ = p.ServeHost(ls.HTTP, runner.HTTPPort) })
	}
	if ls.TLS != nil {
		served.Go(func() { _ = p.ServeTLS(ls.TLS, runner.TLSPort) })
	}
	if ls.DNS != nil {
		served.Go(func() { _ = p.ServeDNS(ls.DNS, egressAddr) })
	}
	return func() {
		*report = &NetworkReport{Policy: pol, Stats: p.Stats()}
		_ = p.Close()
		served.Wait()
	}, nil
}
