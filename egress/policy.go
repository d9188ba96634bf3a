package egress

import (
	"encoding/json"
	"fmt"
	"strings"
)

// A Policy says which names a sandbox may reach. The zero Policy is none:
// no allow rule, so every request is refused not_allowed. Deny rules win
// over allow rules.
type Policy struct {
	allow []Rule
	deny  []Rule
}

// Modes of a policy in its JSON form.
const (
	ModeNone      = "none"
	ModeAllowlist = "allowlist"
)

// NewPolicy parses an allowlist and a denylist. No allow rule (nil or
// empty) is the none policy; the denylist is then kept for Narrow.
func NewPolicy(allow, deny []string) (Policy, error) {
	a, err := parseList(allow, ParseAllow)
	if err != nil {
		return Policy{}, fmt.Errorf("allow: %w", err)
	}
	d, err := parseList(deny, ParseDeny)
	if err != nil {
		return Policy{}, fmt.Errorf("deny: %w", err)
	}
	return Policy{allow: a, deny: d}, nil
}

func parseList(list []string, parse func(string) (Rule, error)) ([]Rule, error) {
	if len(list) > MaxRules {
		return nil, fmt.Errorf("%w: %d rules, over %d", ErrTooManyRules, len(list), MaxRules)
	}
	var rules []Rule
	for i, s := range list {
		r, err := parse(s)
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		rules = addRule(rules, r)
	}
	return rules, nil
}

func addRule(rules []Rule, r Rule) []Rule {
	for _, o := range rules {
		if o.equal(r) {
			return rules
		}
	}
	return append(rules, r)
}

// None reports whether the policy allows nothing at all.
func (p Policy) None() bool { return len(p.allow) == 0 }

// Allow and Deny return copies of the policy's rules.
func (p Policy) Allow() []Rule { return append([]Rule(nil), p.allow...) }
func (p Policy) Deny() []Rule  { return append([]Rule(nil), p.deny...) }

// WithDeny is p with the operator's deny rules added to its own.
func (p Policy) WithDeny(deny []Rule) Policy {
	out := Policy{allow: p.allow, deny: append([]Rule(nil), p.deny...)}
	for _, r := range deny {
		out.deny = addRule(out.deny, r)
	}
	return out
}

// Decide says whether a request for host on port may go on, and the
// reason when it may not ("" when it may). host is the name the client
// asked for, before any resolution.
func (p Policy) Decide(host string, port int) (ok bool, reason string) {
	name, reason, err := normalizeName(host)
	if err != nil {
		return false, reason
	}
	if port < 1 || port > 65535 {
		return false, ReasonBadPort
	}
	for _, r := range p.deny {
		if r.Covers(name, uint16(port)) {
			return false, ReasonDenied
		}
	}
	for _, r := range p.allow {
		if r.Covers(name, uint16(port)) {
			return true, ""
		}
	}
	return false, ReasonNotAllowed
}

// DecideName says whether the policy lets host be reached on some port
// (Decide says yes for host and that port), and the reason when it
// does not: what the DNS responder asks before it answers a name.
func (p Policy) DecideName(host string) (ok bool, reason string) {
	name, reason, err := normalizeName(host)
	if err != nil {
		return false, reason
	}
	for _, r := range p.allow {
		if !r.coversName(name) {
			continue
		}
		for _, port := range r.Ports {
			if ok, _ := p.Decide(name, int(port)); ok {
				return true, ""
			}
		}
	}
	for _, r := range p.deny {
		if r.coversName(name) {
			return false, ReasonDenied
		}
	}
	return false, ReasonNotAllowed
}

// Narrow is what both parent and child allow: each child allow rule is
// cut to the part some parent rule also covers (a name and the ports both
// list), and a child rule, or the part of one, that no parent rule covers
// is dropped, never refused: a run asking for more than its template
// gets less, and Decide then answers not_allowed for it. Both denylists
// apply. A child of none, or a parent of none, gives none. Past MaxRules
// intersections the rest are dropped too, which only narrows further.
func Narrow(parent, child Policy) Policy {
	out := Policy{deny: parent.Deny()}
	for _, r := range child.deny {
		out.deny = addRule(out.deny, r)
	}
	for _, c := range child.allow {
		for _, pr := range parent.allow {
			if r, ok := intersect(c, pr); ok && len(out.allow) < MaxRules {
				out.allow = addRule(out.allow, r)
			}
		}
	}
	return out
}

// String is "none" or "allow a.example:443 *.b.example:80,443", then
// "; deny …" when there are deny rules.
func (p Policy) String() string {
	var b strings.Builder
	if p.None() {
		b.WriteString(ModeNone)
	} else {
		b.WriteString("allow")
		for _, r := range p.allow {
			b.WriteString(" " + r.String())
		}
	}
	if len(p.deny) > 0 {
		b.WriteString("; deny")
		for _, r := range p.deny {
			b.WriteString(" " + r.String())
		}
	}
	return b.String()
}

// policyJSON is a policy's JSON form, for answers and history.
type policyJSON struct {
	Mode  string   `json:"mode"`
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// MarshalJSON writes {"mode":"none"} or {"mode":"allowlist","allow":[…]},
// with "deny" when there are deny rules, each rule in its canonical form.
func (p Policy) MarshalJSON() ([]byte, error) {
	j := policyJSON{Mode: ModeNone}
	if !p.None() {
		j.Mode = ModeAllowlist
	}
	for _, r := range p.allow {
		j.Allow = append(j.Allow, r.String())
	}
	for _, r := range p.deny {
		j.Deny = append(j.Deny, r.String())
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes; a mode of none with allow
// rules, or an unknown mode, is refused.
func (p *Policy) UnmarshalJSON(b []byte) error {
	var j policyJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	switch {
	case j.Mode == ModeNone && len(j.Allow) > 0:
		return fmt.Errorf("%w: mode none with %d allow rules", ErrBadRule, len(j.Allow))
	case j.Mode == ModeAllowlist && len(j.Allow) == 0:
		return fmt.Errorf("%w: mode allowlist with no allow rule", ErrBadRule)
	case j.Mode != ModeNone && j.Mode != ModeAllowlist:
		return fmt.Errorf("%w: mode %q is not none or allowlist", ErrBadRule, j.Mode)
	}
	np, err := NewPolicy(j.Allow, j.Deny)
	if err != nil {
		return err
	}
	*p = np
	return nil
}
