package egress

import (
	"fmt"
	"net/netip"
	"strings"
)

// maxNameLen is the longest DNS name in its text form, without the final dot.
const maxNameLen = 253

// normalizeName lowercases name and drops one final dot. It answers
// ReasonRawIP for anything an address parser could read as an IP (dotted
// quads, IPv6 in or out of brackets, and the all-numeric or hex last
// labels that inet_aton takes, such as 127.1 or 0x7f000001), ReasonBadHost
// for anything else that is not a DNS name of letters, digits and inner
// hyphens, and "" when the name is good.
func normalizeName(name string) (string, string, error) {
	n := strings.ToLower(strings.TrimSuffix(name, "."))
	if n == "" {
		return "", ReasonBadHost, fmt.Errorf("%w: empty host", ErrBadRule)
	}
	if looksLikeIP(n) {
		return "", ReasonRawIP, fmt.Errorf("%w: %q is an IP address; rules and requests name hosts", ErrBadRule, name)
	}
	if len(n) > maxNameLen {
		return "", ReasonBadHost, fmt.Errorf("%w: host is %d bytes, over %d", ErrBadRule, len(n), maxNameLen)
	}
	for label := range strings.SplitSeq(n, ".") {
		if err := checkLabel(label); err != nil {
			return "", ReasonBadHost, fmt.Errorf("%w: host %q: %v", ErrBadRule, name, err)
		}
	}
	return n, "", nil
}

// looksLikeIP reports whether s parses as an IP address, bracketed or
// not, or ends in a label that a lenient resolver reads as a number.
func looksLikeIP(s string) bool {
	t := strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	if _, err := netip.ParseAddr(t); err == nil {
		return true
	}
	if strings.Contains(t, ":") {
		return true // no DNS name has a colon; an IPv6 form in any spelling
	}
	last := t[strings.LastIndexByte(t, '.')+1:]
	return isNumber(last)
}

// isNumber reports whether label is a decimal, octal or 0x-hex number.
func isNumber(label string) bool {
	digits := label
	hex := strings.HasPrefix(label, "0x")
	if hex {
		digits = label[2:]
	}
	for _, c := range digits {
		switch {
		case c >= '0' && c <= '9':
		case hex && c >= 'a' && c <= 'f':
		default:
			return false
		}
	}
	return hex || digits != ""
}

func checkLabel(l string) error {
	switch {
	case l == "":
		return fmt.Errorf("empty label")
	case len(l) > 63:
		return fmt.Errorf("label %q is %d bytes, over 63", l, len(l))
	case l[0] == '-' || l[len(l)-1] == '-':
		return fmt.Errorf("label %q starts or ends with a hyphen", l)
	}
	for _, c := range l {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return fmt.Errorf("label %q holds %q", l, c)
		}
	}
	return nil
}
