package core_test

import (
	"encoding/json"
	"testing"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/egress"
)

// Each template lists the most a run of it may reach: the server's
// allowance with its denylist, or none on a server that gives no network.
func TestTemplatesListTheirNetwork(t *testing.T) {
	allow, err := egress.NewPolicy([]string{"pypi.org:443", "*.pythonhosted.org:443"}, []string{"evil.pythonhosted.org"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		egress *core.Egress
		want   string
	}{
		{name: "no egress", want: `{"mode":"none"}`},
		{name: "an allowance", egress: &core.Egress{Allow: allow},
			want: `{"mode":"allowlist","allow":["pypi.org:443","*.pythonhosted.org:443"],"deny":["evil.pythonhosted.org"]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, core.Config{Egress: tc.egress})
			ts := f.svc.Templates()
			if len(ts) != 2 {
				t.Fatalf("Templates() = %d templates, want 2", len(ts))
			}
			for _, tpl := range ts {
				got, err := json.Marshal(tpl.Network)
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != tc.want {
					t.Errorf("template %s: network = %s, want %s", tpl.Name, got, tc.want)
				}
			}
		})
	}
}
