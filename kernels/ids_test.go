package kernels_test

import (
	"regexp"
	"testing"

	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// A node's sessions carry its tag (Config.IDPrefix) and stay 32 hex
// digits, the form the Jupyter door shows as a UUID.
func TestIDPrefix(t *testing.T) {
	tests := []struct {
		name, prefix string
		want         *regexp.Regexp
	}{
		{name: "none", want: regexp.MustCompile(`^[0-9a-f]{32}$`)},
		{name: "node tag", prefix: "d5529766", want: regexp.MustCompile(`^d5529766[0-9a-f]{24}$`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, &runnertest.Runtime{}, kernels.Config{IDPrefix: tt.prefix})
			a, b := f.create(t, "t", kernels.CreateOptions{}), f.create(t, "t", kernels.CreateOptions{})
			for _, id := range []string{a.ID, b.ID} {
				if !tt.want.MatchString(id) {
					t.Errorf("id %q does not match %s", id, tt.want)
				}
			}
			if a.ID == b.ID {
				t.Errorf("two sessions share id %s", a.ID)
			}
		})
	}
}
