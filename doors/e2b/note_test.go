package e2bdoor

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
)

// A door started over a core that kept its notes (a restarted server)
// knows the sandboxes the earlier door made: their tokens bind in-sandbox
// calls as before, their metadata and extra contexts are there, and
// another tenant still finds nothing.
func TestSandboxesOutliveTheDoor(t *testing.T) {
	td := newTestDoor(t, Config{})
	sa := td.create("alice", map[string]any{"templateID": "code-interpreter-v1", "metadata": map[string]string{"k": "v"}, "timeout": 120})
	if a := td.do("POST", "/contexts", map[string]any{"language": "js"}, interp(sa)); a.code != http.StatusOK {
		t.Fatalf("a second context: HTTP %d %s", a.code, a.body)
	}
	before := td.do("GET", "/contexts", nil, interp(sa))

	again := &testDoor{t: t, r: gin.New(), core: td.core}
	Mount(Config{Core: td.core})(again.r)
	a := again.do("GET", "/sandboxes/"+sa.SandboxID, nil, key("alice"))
	if a.code != http.StatusOK || !strings.Contains(string(a.body), `"metadata":{"k":"v"}`) {
		t.Fatalf("the sandbox through the new door: HTTP %d %s", a.code, a.body)
	}
	if after := again.do("GET", "/contexts", nil, interp(sa)); after.code != http.StatusOK || string(after.body) != string(before.body) {
		t.Errorf("contexts through the new door: HTTP %d %s, want %s", after.code, after.body, before.body)
	}
	if a := again.do("GET", "/contexts", nil, with(interp(sa), "E2B-Traffic-Access-Token", "wrong")); a.code == http.StatusOK {
		t.Errorf("a wrong token passed the new door: %s", a.body)
	}
	if a := again.do("GET", "/sandboxes/"+sa.SandboxID, nil, key("bob")); a.code != http.StatusNotFound {
		t.Errorf("bob sees alice's sandbox through the new door: HTTP %d %s", a.code, a.body)
	}
}
