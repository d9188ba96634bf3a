package server

import (
	"slices"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
)

func TestRetryAfter(t *testing.T) {
	for v, want := range map[string]time.Duration{"": 0, "2": 2 * time.Second, " 1 ": time.Second, "-1": 0, "soon": 0,
		"Wed, 21 Oct 2026 07:28:00 GMT": 0} {
		if got := retryAfter(v); got != want {
			t.Errorf("retryAfter(%q) = %v, want %v", v, got, want)
		}
	}
}

// TestShippedServerArgs: the steady server gets `make run`'s flags and
// only the bench's addresses and directories, and none of the bench's
// PADDOCK_* variables.
func TestShippedServerArgs(t *testing.T) {
	o := bench.Options{Runsc: "/r/runsc", Agent: "/b/agent", Cache: "/c", Snapshots: "/s"}
	got := Config{Name: "steady", Shipped: true, Pool: 3, Templates: []string{"python"}}.args(o, "127.0.0.1:9", "/state")
	want := []string{"serve", "--listen=127.0.0.1:9", "--cache-dir=/c", "--state-dir=/state", "--runsc=/r/runsc", "--agent=/b/agent", "--snapshot-dir=/s"}
	if !slices.Equal(got, want) {
		t.Errorf("args = %q\nwant %q", got, want)
	}
	env := withoutPaddockEnv([]string{"PATH=/bin", "PADDOCK_TEMPLATES=python", "HOME=/root", "PADDOCK_LOG_LEVEL=warn"})
	if !slices.Equal(env, []string{"PATH=/bin", "HOME=/root"}) {
		t.Errorf("env = %q", env)
	}
}
