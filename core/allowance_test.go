package core_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/egress"
)

// A run gets the server's allowance narrowed by its template's and its
// tenant's (the token's paddock_egress claim), then by what it asks:
// never more than any of them.
func TestAllowancesNarrow(t *testing.T) {
	allow, err := egress.NewPolicy([]string{"pypi.org", "*.pythonhosted.org", "registry.npmjs.org"}, []string{"evil.pythonhosted.org"})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, core.Config{Egress: &core.Egress{Allow: allow}, Auth: core.Auth{HS256Secret: secret},
		Templates: []core.Template{
			{Name: "python", Language: "python", Egress: []string{"pypi.org", "*.pythonhosted.org", "example.com"}},
			{Name: "node", Language: "node", Egress: []string{}},
		}})
	listed := map[string]string{}
	for _, tpl := range f.svc.Templates() {
		b, _ := json.Marshal(tpl.Network)
		listed[tpl.Name] = string(b)
	}
	if want := `{"mode":"allowlist","allow":["pypi.org:80,443","*.pythonhosted.org:80,443"],"deny":["evil.pythonhosted.org"]}`; listed["python"] != want {
		t.Errorf("python lists %s, want %s (example.com is not the server's to give)", listed["python"], want)
	}
	if listed["node"] != `{"mode":"none","deny":["evil.pythonhosted.org"]}` {
		t.Errorf("node, whose template allows nothing, lists %s", listed["node"])
	}

	caller := func(claim any) core.Caller {
		t.Helper()
		claims := jwt.MapClaims{"sub": "alice", "scope": "run sessions", "iat": t0.Unix(), "exp": t0.Add(time.Hour).Unix()}
		if claim != nil {
			claims["paddock_egress"] = claim
		}
		tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(secret)
		if err != nil {
			t.Fatal(err)
		}
		c, err := f.svc.Authenticate(peer, tok, "rest")
		if err != nil {
			t.Fatalf("Authenticate with paddock_egress %v: %v", claim, err)
		}
		return c
	}
	plan := func(c core.Caller, lang string, hosts ...string) (string, error) {
		p, err := f.svc.CheckRun(c, core.RunInput{Language: lang, Code: "1", Network: hosts})
		if err != nil {
			return "", err
		}
		return p.Network().String(), nil
	}

	anyone := caller(nil)
	if got, err := plan(anyone, "python", "pypi.org", "example.com"); err != nil || got != "allow pypi.org:80,443; deny evil.pythonhosted.org" {
		t.Errorf("a tenant with no claim asking pypi.org and example.com: %q, %v; want pypi.org alone", got, err)
	}
	_, err = plan(anyone, "node", "registry.npmjs.org")
	checkErr(t, "node's template allows nothing", err, core.KindForbidden, "network_not_allowed")

	pypiOnly := caller([]string{"pypi.org:443"})
	if got, err := plan(pypiOnly, "python", "pypi.org", "files.pythonhosted.org"); err != nil || got != "allow pypi.org:443; deny evil.pythonhosted.org" {
		t.Errorf("a tenant allowed pypi.org:443 alone: %q, %v; want pypi.org:443", got, err)
	}
	_, err = plan(pypiOnly, "python", "files.pythonhosted.org")
	checkErr(t, "a host the tenant may not reach", err, core.KindForbidden, "network_not_allowed")
	_, err = plan(caller([]string{}), "python", "pypi.org")
	checkErr(t, "a tenant whose claim allows nothing", err, core.KindForbidden, "network_not_allowed")

	// A claim that does not parse makes the token invalid.
	tok, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "bob", "iat": t0.Unix(), "exp": t0.Add(time.Hour).Unix(),
		"paddock_egress": []string{"10.0.0.1"}}).SignedString(secret)
	_, err = f.svc.Authenticate(peer, tok, "rest")
	checkErr(t, "a claim with a raw address", err, core.KindUnauthenticated, "invalid_token")
}
