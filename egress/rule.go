package egress

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MaxRules bounds a list of rules: an allowlist, a denylist, and what
// Narrow makes of two.
const MaxRules = 256

// maxPorts bounds the ports of one rule.
const maxPorts = 32

// DefaultPorts are an allow rule's ports when it names none.
var DefaultPorts = []uint16{80, 443}

// A Rule covers a host, or every subdomain of a suffix, on some ports.
type Rule struct {
	// Host is the DNS name, lowercased without a final dot; for a
	// wildcard it is the suffix after "*.".
	Host string
	// Wildcard: the rule covers every name ending in "."+Host, at any
	// depth, and not Host itself.
	Wildcard bool
	// Ports, sorted and distinct; nil (a deny rule that names none)
	// covers every port.
	Ports []uint16
}

// ParseAllow parses one allow rule; a rule naming no port gets DefaultPorts.
func ParseAllow(s string) (Rule, error) { return parseRule(s, DefaultPorts) }

// ParseDeny parses one deny rule; a rule naming no port covers every port.
func ParseDeny(s string) (Rule, error) { return parseRule(s, nil) }

func parseRule(s string, defPorts []uint16) (Rule, error) {
	src := strings.TrimSpace(s)
	if src == "" {
		return Rule{}, fmt.Errorf("%w: empty rule", ErrBadRule)
	}
	host, ports, hasPorts := src, "", false
	if i := strings.LastIndexByte(src, ':'); i >= 0 && !strings.HasSuffix(src, "]") && strings.Count(src, ":") == 1 {
		host, ports, hasPorts = src[:i], src[i+1:], true
	}
	var r Rule
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		r.Wildcard, host = true, rest
	}
	if strings.Contains(host, "*") {
		return Rule{}, fmt.Errorf("%w: %q: a wildcard is only a leading \"*.\" before a name", ErrBadRule, s)
	}
	name, _, err := normalizeName(host)
	if err != nil {
		return Rule{}, fmt.Errorf("rule %q: %w", s, err)
	}
	r.Host = name
	if !hasPorts {
		r.Ports = slices.Clone(defPorts)
		return r, nil
	}
	if r.Ports, err = parsePorts(ports); err != nil {
		return Rule{}, fmt.Errorf("rule %q: %w", s, err)
	}
	return r, nil
}

func parsePorts(s string) ([]uint16, error) {
	if s == "" {
		return nil, fmt.Errorf("%w: empty port list after \":\"", ErrBadRule)
	}
	var ports []uint16
	for p := range strings.SplitSeq(s, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(p), 10, 16)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("%w: port %q is not in 1-65535", ErrBadRule, p)
		}
		ports = append(ports, uint16(n))
	}
	slices.Sort(ports)
	ports = slices.Compact(ports)
	if len(ports) > maxPorts {
		return nil, fmt.Errorf("%w: %d ports, over %d", ErrBadRule, len(ports), maxPorts)
	}
	return ports, nil
}

// coversName reports whether the rule's host part covers name
// (normalized).
func (r Rule) coversName(name string) bool {
	if r.Wildcard {
		return strings.HasSuffix(name, "."+r.Host)
	}
	return name == r.Host
}

func (r Rule) coversPort(port uint16) bool {
	return r.Ports == nil || slices.Contains(r.Ports, port)
}

// Covers reports whether the rule covers name (normalized) on port.
func (r Rule) Covers(name string, port uint16) bool {
	return r.coversName(name) && r.coversPort(port)
}

// intersect is the rule covering exactly what both a and b cover, and
// false when that is nothing.
func intersect(a, b Rule) (Rule, bool) {
	var r Rule
	switch {
	case !a.Wildcard && !b.Wildcard:
		if a.Host != b.Host {
			return Rule{}, false
		}
		r.Host = a.Host
	case !a.Wildcard:
		if !b.coversName(a.Host) {
			return Rule{}, false
		}
		r.Host = a.Host
	case !b.Wildcard:
		if !a.coversName(b.Host) {
			return Rule{}, false
		}
		r.Host = b.Host
	default: // two wildcards: the longer suffix, when it is inside the other
		switch {
		case a.Host == b.Host || strings.HasSuffix(a.Host, "."+b.Host):
			r.Host = a.Host
		case strings.HasSuffix(b.Host, "."+a.Host):
			r.Host = b.Host
		default:
			return Rule{}, false
		}
		r.Wildcard = true
	}
	switch {
	case a.Ports == nil:
		r.Ports = slices.Clone(b.Ports)
	case b.Ports == nil:
		r.Ports = slices.Clone(a.Ports)
	default:
		for _, p := range a.Ports {
			if slices.Contains(b.Ports, p) {
				r.Ports = append(r.Ports, p)
			}
		}
		if r.Ports == nil {
			return Rule{}, false
		}
	}
	return r, true
}

// String is the rule's canonical form: host or *.suffix, then its ports
// when it has a list.
func (r Rule) String() string {
	var b strings.Builder
	if r.Wildcard {
		b.WriteString("*.")
	}
	b.WriteString(r.Host)
	for i, p := range r.Ports {
		if i == 0 {
			b.WriteByte(':')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(p)))
	}
	return b.String()
}

func (r Rule) equal(o Rule) bool {
	return r.Host == o.Host && r.Wildcard == o.Wildcard && slices.Equal(r.Ports, o.Ports) && (r.Ports == nil) == (o.Ports == nil)
}
