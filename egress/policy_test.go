package egress

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParseAllow(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "default ports", in: "example.com", want: "example.com:80,443"},
		{name: "one port", in: "api.example.com:8443", want: "api.example.com:8443"},
		{name: "sorted distinct ports", in: "example.com:443,80,443", want: "example.com:80,443"},
		{name: "case and final dot", in: "Example.COM.", want: "example.com:80,443"},
		{name: "wildcard", in: "*.cdn.example.com:443", want: "*.cdn.example.com:443"},
		{name: "single label", in: "localhost", want: "localhost:80,443"},
		{name: "spaces around", in: "  example.com:80  ", want: "example.com:80"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseAllow(tc.in)
			if err != nil {
				t.Fatalf("ParseAllow(%q): %v", tc.in, err)
			}
			if got := r.String(); got != tc.want {
				t.Errorf("ParseAllow(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseRefusesBadRules(t *testing.T) {
	tests := []struct {
		name, in, msg string
	}{
		{name: "empty", in: "", msg: "empty rule"},
		{name: "blank", in: "   ", msg: "empty rule"},
		{name: "IPv4", in: "1.2.3.4", msg: "is an IP address"},
		{name: "IPv4 with port", in: "10.0.0.1:443", msg: "is an IP address"},
		{name: "IPv6 bracketed", in: "[::1]:443", msg: "is an IP address"},
		{name: "IPv6 bare", in: "::1", msg: "is an IP address"},
		{name: "short dotted number", in: "127.1", msg: "is an IP address"},
		{name: "hex number", in: "0x7f000001", msg: "is an IP address"},
		{name: "numeric last label", in: "foo.123", msg: "is an IP address"},
		{name: "empty ports", in: "example.com:", msg: "empty port list"},
		{name: "port zero", in: "example.com:0", msg: "port \"0\" is not in 1-65535"},
		{name: "port too big", in: "example.com:70000", msg: "port \"70000\" is not in 1-65535"},
		{name: "named port", in: "example.com:https", msg: "port \"https\" is not in 1-65535"},
		{name: "empty port in list", in: "example.com:80,", msg: "port \"\" is not in 1-65535"},
		{name: "underscore", in: "exa_mple.com", msg: "holds '_'"},
		{name: "leading hyphen", in: "-a.example.com", msg: "starts or ends with a hyphen"},
		{name: "empty label", in: "a..example.com", msg: "empty label"},
		{name: "bare star", in: "*", msg: "wildcard is only a leading"},
		{name: "star alone before dot", in: "*.", msg: "empty host"},
		{name: "inner star", in: "a.*.example.com", msg: "wildcard is only a leading"},
		{name: "partial star", in: "*foo.example.com", msg: "wildcard is only a leading"},
		{name: "label over 63", in: strings.Repeat("a", 64) + ".com", msg: "is 64 bytes, over 63"},
		{name: "name over 253", in: strings.Repeat("abcdefghi.", 25) + "abcd", msg: "host is 254 bytes, over 253"},
		{name: "too many ports", in: "example.com:" + portList(33), msg: "33 ports, over 32"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseAllow(tc.in)
			if !errors.Is(err, ErrBadRule) {
				t.Fatalf("ParseAllow(%q) = %v, want ErrBadRule", tc.in, err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("ParseAllow(%q) = %q, want it to say %q", tc.in, err, tc.msg)
			}
		})
	}
}

func portList(n int) string {
	ps := make([]string, n)
	for i := range ps {
		ps[i] = fmt.Sprint(1000 + i)
	}
	return strings.Join(ps, ",")
}

func TestParseDenyCoversEveryPort(t *testing.T) {
	r, err := ParseDeny("Evil.example")
	if err != nil {
		t.Fatal(err)
	}
	if r.String() != "evil.example" || r.Ports != nil {
		t.Fatalf("ParseDeny = %q ports %v, want evil.example with no port list", r, r.Ports)
	}
	for _, port := range []uint16{1, 80, 443, 65535} {
		if !r.Covers("evil.example", port) {
			t.Errorf("deny rule does not cover port %d", port)
		}
	}
}

func TestNewPolicyCapsRules(t *testing.T) {
	rules := make([]string, MaxRules+1)
	for i := range rules {
		rules[i] = fmt.Sprintf("h%d.example.com", i)
	}
	if _, err := NewPolicy(rules[:MaxRules], nil); err != nil {
		t.Fatalf("%d rules: %v", MaxRules, err)
	}
	_, err := NewPolicy(rules, nil)
	if !errors.Is(err, ErrTooManyRules) || !strings.Contains(err.Error(), "257 rules, over 256") {
		t.Fatalf("257 allow rules: %v, want ErrTooManyRules", err)
	}
	_, err = NewPolicy([]string{"a.com"}, rules)
	if !errors.Is(err, ErrTooManyRules) || !strings.HasPrefix(err.Error(), "deny: ") {
		t.Fatalf("257 deny rules: %v, want deny: ErrTooManyRules", err)
	}
	_, err = NewPolicy([]string{"ok.com", "1.2.3.4"}, nil)
	if !errors.Is(err, ErrBadRule) || !strings.HasPrefix(err.Error(), "allow: [1]: ") {
		t.Fatalf("bad second rule: %v, want allow: [1]: …", err)
	}
}

func mustPolicy(t *testing.T, allow, deny []string) Policy {
	t.Helper()
	p, err := NewPolicy(allow, deny)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDecide(t *testing.T) {
	p := mustPolicy(t,
		[]string{"api.example.com", "*.cdn.example.com:443", "example.org:8080"},
		[]string{"*.bad.cdn.example.com", "api.example.com:80"})
	tests := []struct {
		host   string
		port   int
		ok     bool
		reason string
	}{
		{"api.example.com", 443, true, ""},
		{"API.Example.com.", 443, true, ""},
		{"api.example.com", 80, false, ReasonDenied},
		{"api.example.com", 8080, false, ReasonNotAllowed},
		{"img.cdn.example.com", 443, true, ""},
		{"a.b.cdn.example.com", 443, true, ""},
		{"cdn.example.com", 443, false, ReasonNotAllowed},
		{"img.cdn.example.com", 80, false, ReasonNotAllowed},
		{"x.bad.cdn.example.com", 443, false, ReasonDenied},
		{"bad.cdn.example.com", 443, true, ""},
		{"evilcdn.example.com", 443, false, ReasonNotAllowed},
		{"example.org", 8080, true, ""},
		{"example.org", 443, false, ReasonNotAllowed},
		{"other.example", 443, false, ReasonNotAllowed},
		{"93.184.216.34", 443, false, ReasonRawIP},
		{"[::1]", 443, false, ReasonRawIP},
		{"2130706433", 80, false, ReasonRawIP},
		{"bad_name.example.com", 443, false, ReasonBadHost},
		{"", 443, false, ReasonBadHost},
		{"api.example.com", 0, false, ReasonBadPort},
		{"api.example.com", 65536, false, ReasonBadPort},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s:%d", tc.host, tc.port), func(t *testing.T) {
			ok, reason := p.Decide(tc.host, tc.port)
			if ok != tc.ok || reason != tc.reason {
				t.Errorf("Decide(%q, %d) = %v, %q; want %v, %q", tc.host, tc.port, ok, reason, tc.ok, tc.reason)
			}
		})
	}
}

func TestDecideNoneRefusesAll(t *testing.T) {
	var p Policy
	if !p.None() || p.String() != "none" {
		t.Fatalf("zero Policy: None %v String %q", p.None(), p)
	}
	for _, host := range []string{"example.com", "localhost"} {
		if ok, reason := p.Decide(host, 443); ok || reason != ReasonNotAllowed {
			t.Errorf("none: Decide(%q) = %v, %q", host, ok, reason)
		}
	}
}

func TestWithDeny(t *testing.T) {
	p := mustPolicy(t, []string{"*.example.com"}, nil)
	d, _ := ParseDeny("*.internal.example.com")
	q := p.WithDeny([]Rule{d})
	if ok, reason := q.Decide("db.internal.example.com", 443); ok || reason != ReasonDenied {
		t.Errorf("with deny: %v %q, want denied", ok, reason)
	}
	if ok, _ := p.Decide("db.internal.example.com", 443); !ok {
		t.Error("WithDeny changed the policy it was called on")
	}
	if got := q.String(); got != "allow *.example.com:80,443; deny *.internal.example.com" {
		t.Errorf("String = %q", got)
	}
}

func TestNarrow(t *testing.T) {
	tests := []struct {
		name                  string
		parent, child         []string
		parentDeny, childDeny []string
		want                  string
	}{
		{name: "same rule", parent: []string{"api.example.com"}, child: []string{"api.example.com"},
			want: "allow api.example.com:80,443"},
		{name: "child asks for more ports", parent: []string{"api.example.com:443"}, child: []string{"api.example.com"},
			want: "allow api.example.com:443"},
		{name: "child host not covered is dropped", parent: []string{"api.example.com"}, child: []string{"api.example.com", "evil.example"},
			want: "allow api.example.com:80,443"},
		{name: "nothing covered gives none", parent: []string{"api.example.com"}, child: []string{"evil.example"},
			want: "none"},
		{name: "disjoint ports give none", parent: []string{"api.example.com:443"}, child: []string{"api.example.com:80"},
			want: "none"},
		{name: "exact child inside parent wildcard", parent: []string{"*.example.com"}, child: []string{"a.example.com:443"},
			want: "allow a.example.com:443"},
		{name: "apex not inside wildcard", parent: []string{"*.example.com"}, child: []string{"example.com"},
			want: "none"},
		{name: "child wildcard narrowed to parent's exact name", parent: []string{"a.example.com"}, child: []string{"*.example.com"},
			want: "allow a.example.com:80,443"},
		{name: "deeper child wildcard kept", parent: []string{"*.example.com"}, child: []string{"*.cdn.example.com"},
			want: "allow *.cdn.example.com:80,443"},
		{name: "wider child wildcard cut to parent's", parent: []string{"*.cdn.example.com"}, child: []string{"*.example.com"},
			want: "allow *.cdn.example.com:80,443"},
		{name: "child none", parent: []string{"api.example.com"}, child: nil, want: "none"},
		{name: "parent none", parent: nil, child: []string{"api.example.com"}, want: "none"},
		{name: "both denylists apply", parent: []string{"*.example.com"}, child: []string{"*.example.com"},
			parentDeny: []string{"a.example.com"}, childDeny: []string{"b.example.com:80"},
			want: "allow *.example.com:80,443; deny a.example.com b.example.com:80"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Narrow(mustPolicy(t, tc.parent, tc.parentDeny), mustPolicy(t, tc.child, tc.childDeny))
			if got.String() != tc.want {
				t.Errorf("Narrow = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestNarrowNeverWidens checks, over a grid of names and ports, that
// whatever the narrowed policy allows both its parent and its child do.
func TestNarrowNeverWidens(t *testing.T) {
	parent := mustPolicy(t, []string{"*.example.com:443", "api.example.org"}, []string{"x.a.example.com"})
	child := mustPolicy(t, []string{"*.a.example.com", "*.example.org:80", "example.net"}, []string{"api.example.org:443"})
	n := Narrow(parent, child)
	hosts := []string{"a.example.com", "b.a.example.com", "x.a.example.com", "example.com", "api.example.org", "example.org", "example.net"}
	allowed := 0
	for _, h := range hosts {
		for _, port := range []int{80, 443, 8080} {
			ok, _ := n.Decide(h, port)
			pok, _ := parent.Decide(h, port)
			cok, _ := child.Decide(h, port)
			if ok && (!pok || !cok) {
				t.Errorf("%s:%d allowed by Narrow, parent %v child %v", h, port, pok, cok)
			}
			if ok {
				allowed++
			}
		}
	}
	// b.a.example.com:443 and api.example.org:80 are what both allow.
	if allowed != 2 {
		t.Errorf("Narrow allows %d of the grid (%s), want 2", allowed, n)
	}
}

func TestPolicyJSON(t *testing.T) {
	p := mustPolicy(t, []string{"*.Example.com:443", "api.example.org"}, []string{"evil.example.com"})
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"mode":"allowlist","allow":["*.example.com:443","api.example.org:80,443"],"deny":["evil.example.com"]}`
	if string(b) != want {
		t.Fatalf("Marshal = %s, want %s", b, want)
	}
	var back Policy
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.String() != p.String() {
		t.Errorf("round trip = %q, want %q", back, p)
	}
	none, _ := json.Marshal(Policy{})
	if string(none) != `{"mode":"none"}` {
		t.Errorf("none = %s", none)
	}
	for _, bad := range []string{
		`{"mode":"open"}`,
		`{"mode":"none","allow":["a.com"]}`,
		`{"mode":"allowlist"}`,
		`{"mode":"allowlist","allow":["10.0.0.1"]}`,
	} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil {
			t.Errorf("Unmarshal(%s) accepted", bad)
		}
	}
}
