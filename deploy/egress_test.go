package deploy

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/egress"
)

// TestEgressExamples: the example allowances in egress/ parse as
// --egress-allow reads them (space- or newline-separated rules) and allow
// their index's hosts on 443 only.
func TestEgressExamples(t *testing.T) {
	for _, tc := range []struct {
		file    string
		want    string
		allowed []string
		refused []string
	}{
		{"pypi.txt", "allow pypi.org:443 files.pythonhosted.org:443",
			[]string{"pypi.org:443", "files.pythonhosted.org:443"},
			[]string{"pypi.org:80", "test.pypi.org:443", "pythonhosted.org:443", "registry.npmjs.org:443"}},
		{"npm.txt", "allow registry.npmjs.org:443",
			[]string{"registry.npmjs.org:443"},
			[]string{"registry.npmjs.org:80", "npmjs.org:443", "pypi.org:443"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("egress", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			pol, err := egress.NewPolicy(strings.Fields(string(b)), nil)
			if err != nil {
				t.Fatalf("--egress-allow=\"$(cat deploy/egress/%s)\": %v", tc.file, err)
			}
			if got := pol.String(); got != tc.want {
				t.Errorf("policy %q, want %q", got, tc.want)
			}
			decide := func(hp string) bool {
				host, port, _ := strings.Cut(hp, ":")
				n, err := strconv.Atoi(port)
				if err != nil {
					t.Fatal(err)
				}
				ok, _ := pol.Decide(host, n)
				return ok
			}
			for _, hp := range tc.allowed {
				if !decide(hp) {
					t.Errorf("%s refused, want it allowed", hp)
				}
			}
			for _, hp := range tc.refused {
				if decide(hp) {
					t.Errorf("%s allowed, want it refused", hp)
				}
			}
		})
	}
}
