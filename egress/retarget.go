package egress

// A proxy's policy may change while it serves (an E2B sandbox's network
// update): connections and lookups decided after SetPolicy follow the new
// one; tunnels already open run on, as the policy decided them when they
// opened.

// SetPolicy makes pol decide every later request.
func (p *Proxy) SetPolicy(pol Policy) { p.swapped.Store(&pol) }

// current is the policy that decides now.
func (p *Proxy) current() Policy {
	if q := p.swapped.Load(); q != nil {
		return *q
	}
	return p.policy
}
