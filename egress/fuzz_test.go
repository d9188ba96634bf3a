package egress

import (
	"net/netip"
	"strings"
	"testing"
)

// FuzzParseAllow: whatever parses has a canonical form that parses back
// to itself, names no IP address, and covers its own host when exact.
func FuzzParseAllow(f *testing.F) {
	for _, s := range []string{"example.com", "*.a.example.com:443,80", "A.B.:1", "127.1", "[::1]:80", "x:0", "a..b", "*", "xn--bcher-kva.example"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseAllow(s)
		if err != nil {
			return
		}
		canon := r.String()
		again, err := ParseAllow(canon)
		if err != nil || again.String() != canon {
			t.Fatalf("%q parsed to %q, which parses to %q, %v", s, canon, again, err)
		}
		host, _, _ := strings.Cut(canon, ":")
		if _, err := netip.ParseAddr(strings.TrimPrefix(host, "*.")); err == nil {
			t.Fatalf("%q accepted as a rule for the address %s", s, host)
		}
		if !r.Wildcard {
			if ok, reason := (Policy{allow: []Rule{r}}).Decide(r.Host, int(r.Ports[0])); !ok {
				t.Fatalf("rule %q refuses its own host: %s", canon, reason)
			}
		}
	})
}
