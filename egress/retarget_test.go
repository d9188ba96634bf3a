package egress

import "testing"

// SetPolicy decides what comes after it; the first policy stands until.
func TestSetPolicy(t *testing.T) {
	a, _ := NewPolicy([]string{"a.test"}, nil)
	b, _ := NewPolicy([]string{"b.test"}, nil)
	p, err := New(Config{Policy: a})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := p.current().Decide("a.test", 443); !ok {
		t.Error("a.test refused under the first policy")
	}
	p.SetPolicy(b)
	if ok, reason := p.current().Decide("a.test", 443); ok || reason != ReasonNotAllowed {
		t.Errorf("a.test after SetPolicy(b): %v %q, want refused %q", ok, reason, ReasonNotAllowed)
	}
	if ok, _ := p.current().Decide("b.test", 443); !ok {
		t.Error("b.test refused after SetPolicy(b)")
	}
	p.SetPolicy(Policy{})
	if ok, _ := p.current().Decide("b.test", 443); ok {
		t.Error("b.test allowed after SetPolicy(none)")
	}
}
