package runsc

import (
	"slices"
	"testing"

	"github.com/paddock-dev/paddock/runner"
)

func TestCreateFlagsAreStartsFlags(t *testing.T) {
	s := runner.Spec{Limits: runner.Limits{DiskBytes: 64 << 20}}
	want := []string{"--network=none", "--overlay2=root:self,size=67108864"}
	if got := CreateFlags(s); !slices.Equal(got, want) {
		t.Errorf("CreateFlags = %q, want %q", got, want)
	}
	if got := CreateFlags(runner.Spec{}); !slices.Equal(got, []string{"--network=none", "--overlay2=root:self,size=268435456"}) {
		t.Errorf("CreateFlags without limits = %q, want the default 256 MiB overlay", got)
	}
}
