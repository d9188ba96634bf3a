package core

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"

	"github.com/paddock-dev/paddock/egress"
	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/runner"
)

// Networked sessions. A session that asks for a network gets the server's
// allowance narrowed by its request, as a run does (network.go), for its
// whole life: every sandbox it leases, the first, a replacement after its
// kernel died, one woken from its image, a fork child's, is networked and
// served by its own egress proxy under that policy. The kernels keep the
// policy (in its JSON form) in the session's catalog record; a session
// woken on a later server is narrowed again by that server's allowance, so
// an operator who takes a host away takes it from sleeping sessions too.

// NetworkAsk is what a session asks of the network.
type NetworkAsk struct {
	// Allow names the hosts the session means to reach, as RunInput.
	// Network does.
	Allow []string
	// All asks for everything the server allows (E2B's
	// allow_internet_access); Allow must then be empty.
	All bool
	// Deny names hosts the session must not reach, even allowed ones; it
	// only narrows.
	Deny []string
}

// planSessionNetwork checks a session's ask and returns its policy in the
// JSON form the kernels keep; "" without a network.
func (s *Service) planSessionNetwork(allow egress.Policy, ask *NetworkAsk) (string, *egress.Policy, error) {
	if ask == nil {
		return "", nil, nil
	}
	if ask.All && len(ask.Allow) > 0 {
		return "", nil, invalid("invalid_request", "network: ask for all the server allows or name hosts, not both")
	}
	deny, err := egress.NewPolicy(nil, ask.Deny)
	if err != nil {
		return "", nil, invalid("invalid_request", "network: deny: %v", err)
	}
	var pol *egress.Policy
	if ask.All {
		if allow.None() {
			return "", nil, noNetwork()
		}
		pol = &allow
	} else if pol, err = s.planNetwork(allow, ask.Allow); err != nil || pol == nil {
		if err == nil {
			err = invalid("invalid_request", "network: name at least one host, or leave network out")
		}
		return "", nil, err
	}
	narrowed := pol.WithDeny(deny.Deny())
	b, err := json.Marshal(narrowed)
	if err != nil {
		return "", nil, fmt.Errorf("encoding a session's network policy: %w", err)
	}
	return string(b), &narrowed, nil
}

// sessionPolicy decodes a session's kept policy and narrows it by this
// server's allowance. What is left may be none: the sandbox keeps its
// interface and its proxy refuses everything, rather than the session
// failing to wake.
func (s *Service) sessionPolicy(kept string) (egress.Policy, error) {
	var pol egress.Policy
	if err := json.Unmarshal([]byte(kept), &pol); err != nil {
		return egress.Policy{}, fmt.Errorf("the session's network policy does not decode: %w", err)
	}
	return egress.Narrow(s.networkAllowance(), pol), nil
}

// sessionEgress is one networked session sandbox's proxy, for the kernels.
type sessionEgress struct {
	svc   *Service
	proxy *egress.Proxy
	stop  func()
}

func (e *sessionEgress) Stop() { e.stop() }

func (e *sessionEgress) SetPolicy(kept string) error {
	pol, err := e.svc.sessionPolicy(kept)
	if err != nil {
		return err
	}
	e.proxy.SetPolicy(pol)
	return nil
}

// serveSessionNetwork is the kernels' NetworkFunc: one proxy for one
// leased sandbox of a networked session, until the lease ends.
func (s *Service) serveSessionNetwork(sb runner.Sandbox, kept string) (kernels.NetworkHandle, error) {
	pol, err := s.sessionPolicy(kept)
	if err != nil {
		return nil, err
	}
	var report *NetworkReport
	e := &sessionEgress{svc: s}
	if e.stop, err = s.serveEgress(sb, pol, &report, &e.proxy); err != nil {
		return nil, err
	}
	return e, nil
}

// SetSessionNetwork replaces a networked session's policy with what ask
// gets now (nil: nothing), as at its creation: the server's, template's
// and caller's allowances narrowed by ask. Its proxy decides later
// connections by it (open tunnels run on), and so do the sandboxes it
// leases later. A session created without a network cannot get one
// (KindConflict "network_fixed").
func (s *Service) SetSessionNetwork(c Caller, id string, ask *NetworkAsk) (_ Session, err error) {
	defer func() { s.metrics.done(c.Door, "set_session_network", err) }()
	if err := s.sessionsFor(c); err != nil {
		return Session{}, err
	}
	info, err := s.kernels.Get(c.Tenant, id)
	if err != nil {
		return Session{}, s.fail(err)
	}
	if info.Network == "" {
		return Session{}, &Error{Kind: KindConflict, Code: "network_fixed", cause: kernels.ErrNetworkFixed,
			Message: "this session was created without a network, and a running sandbox cannot get an interface: create it with one"}
	}
	kept := noneKept
	if ask != nil {
		if kept, _, err = s.planSessionNetwork(s.allowanceFor(c, info.Template), ask); err != nil {
			return Session{}, err
		}
	}
	if info, err = s.kernels.Retarget(c.Tenant, id, kept); err != nil {
		if errors.Is(err, kernels.ErrNetworkFixed) {
			return Session{}, &Error{Kind: KindConflict, Code: "network_fixed", cause: err, Message: err.Error()}
		}
		return Session{}, s.fail(err)
	}
	return s.session(info), nil
}

// noneKept is the kept form of a policy that allows nothing.
var noneKept = func() string {
	b, _ := json.Marshal(egress.Policy{})
	return string(b)
}()

// sessionNetwork is a session's policy for its owner; nil without one.
func sessionNetwork(kept string) *NetworkPolicy {
	if kept == "" {
		return nil
	}
	var pol egress.Policy
	if json.Unmarshal([]byte(kept), &pol) != nil {
		return nil
	}
	return &pol
}

// AlwaysBlocked reports whether every address of p is one the egress
// guard refuses whatever the policy (loopback, private, link-local, ...):
// for doors whose clients name ranges to deny.
func AlwaysBlocked(p netip.Prefix) bool {
	for _, b := range egress.DefaultBlocks() {
		if b.Prefix.Bits() <= p.Bits() && b.Prefix.Contains(p.Addr()) {
			return true
		}
	}
	return false
}
