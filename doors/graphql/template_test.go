package graphqldoor

import (
	"testing"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/egress"
)

// A template's network is the core's policy in its canonical form.
func TestTemplateNetwork(t *testing.T) {
	allow, err := egress.NewPolicy([]string{"pypi.org:443", "*.example.com"}, []string{"x.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeCore{templates: []core.TemplateInfo{
		{Template: core.Template{Name: "python", Language: "python"}, Network: allow},
		{Template: core.Template{Name: "node", Language: "node"}},
	}}
	a := serve(t, f, Options{}, "alice", `{ templates { name network { mode allow deny } } }`, nil)
	want := `{"templates":[{"name":"python","network":{"mode":"allowlist","allow":["pypi.org:443","*.example.com:80,443"],"deny":["x.example.com"]}},` +
		`{"name":"node","network":{"mode":"none","allow":[],"deny":[]}}]}`
	if len(a.Errors) != 0 || string(a.Data) != want {
		t.Errorf("data %s errors %+v, want %s", a.Data, a.Errors, want)
	}
}
