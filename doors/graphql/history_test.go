package graphqldoor

import (
	"testing"

	"github.com/paddock-dev/paddock/store"
)

// A run's network is the policy its history row recorded, in the same
// form as a template's; null for a run without one.
func TestRunNetwork(t *testing.T) {
	f := &fakeCore{runs: []store.Run{
		{ID: 2, Kind: store.KindCell, Tenant: "alice", SessionID: "s-1",
			Network: "allow pypi.org:443 *.pythonhosted.org:80,443; deny evil.pythonhosted.org"},
		{ID: 1, Kind: store.KindRun, Tenant: "alice"},
		{ID: 3, Kind: store.KindCell, Tenant: "alice", SessionID: "s-2", Network: "none"},
	}}
	a := serve(t, f, Options{}, "alice", `{ runs { items { id network { mode allow deny } } } }`, nil)
	want := `{"runs":{"items":[` +
		`{"id":"2","network":{"mode":"allowlist","allow":["pypi.org:443","*.pythonhosted.org:80,443"],"deny":["evil.pythonhosted.org"]}},` +
		`{"id":"1","network":null},` +
		`{"id":"3","network":{"mode":"none","allow":[],"deny":[]}}]}}`
	if len(a.Errors) != 0 || string(a.Data) != want {
		t.Errorf("data %s errors %+v, want %s", a.Data, a.Errors, want)
	}
}
