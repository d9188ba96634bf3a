package core

import (
	"fmt"

	"github.com/paddock-dev/paddock/egress"
)

// The most a run or session may reach is three allowances narrowed into
// one, never widened: the server's (Config.Egress.Allow, the operator's
// denylist in it), its template's own (Template.Egress, when the template
// names one) and its tenant's (the token's paddock_egress claim, when the
// token has one). A request then narrows that further (network.go).

// allowanceFor is the most c may reach with a sandbox of template.
func (s *Service) allowanceFor(c Caller, template string) egress.Policy {
	allow := s.templateAllowance(template)
	if c.Network != nil {
		allow = egress.Narrow(allow, *c.Network)
	}
	return allow
}

// templateAllowance is the server's allowance narrowed by template's own.
func (s *Service) templateAllowance(template string) egress.Policy {
	allow := s.networkAllowance()
	if own, ok := s.templateNets[template]; ok {
		allow = egress.Narrow(allow, own)
	}
	return allow
}

// templateNetworks parses each template's own allowance.
func templateNetworks(ts []Template) (map[string]egress.Policy, error) {
	out := map[string]egress.Policy{}
	for _, t := range ts {
		if t.Egress == nil {
			continue
		}
		p, err := egress.NewPolicy(t.Egress, nil)
		if err != nil {
			return nil, fmt.Errorf("template %s: network.allow: %w", t.Name, err)
		}
		out[t.Name] = p
	}
	return out, nil
}

// noNetwork is the refusal of a network where nothing is allowed.
func noNetwork() *Error {
	return &Error{Kind: KindForbidden, Code: "network_not_allowed",
		Message: "no network is allowed here: the operator allows no hosts (--egress-allow), or none for this template or tenant"}
}

// tokenNetwork parses a token's paddock_egress claim: nil when it has
// none.
func tokenNetwork(claim *[]string) (*egress.Policy, error) {
	if claim == nil {
		return nil, nil
	}
	p, err := egress.NewPolicy(*claim, nil)
	if err != nil {
		return nil, fmt.Errorf("the token's paddock_egress claim: %w", err)
	}
	return &p, nil
}
