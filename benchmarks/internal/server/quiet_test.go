package server

import (
	"testing"
)

func TestQuietNeedsFullPoolsAndNoStarts(t *testing.T) {
	state := func(target, ready, starting, kernelsStarting int) PoolState {
		var p PoolState
		p.Pool.Target, p.Pool.Ready, p.Pool.Starting, p.Pool.KernelsStarting = target, ready, starting, kernelsStarting
		return p
	}
	for _, tc := range []struct {
		name string
		ps   map[string]PoolState
		want bool
	}{
		{"all full, nothing starting", map[string]PoolState{"python": state(2, 2, 0, 0), "node": state(2, 3, 0, 0)}, true},
		{"one pool short", map[string]PoolState{"python": state(2, 2, 0, 0), "node": state(2, 1, 0, 0)}, false},
		{"a refill running", map[string]PoolState{"python": state(2, 2, 1, 0)}, false},
		{"a kernel opening", map[string]PoolState{"python": state(2, 2, 0, 1)}, false},
		{"no templates", map[string]PoolState{}, true},
	} {
		if got := quiet(tc.ps); got != tc.want {
			t.Errorf("%s: quiet = %v, want %v", tc.name, got, tc.want)
		}
	}
}
