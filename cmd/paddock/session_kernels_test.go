package main

import (
	"strings"
	"testing"
)

func TestSessionKernelsFlag(t *testing.T) {
	cfg, _, err := parse("serve", []string{"--session-kernels=-1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "--session-kernels must be at least 0") {
		t.Errorf("Validate with --session-kernels=-1: %v, want it refused", err)
	}
	cfg, _, err = parse("serve", nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SessionKernels != 1 {
		t.Errorf("default --session-kernels = %d, want 1", cfg.SessionKernels)
	}
}

func TestSessionKernelsFollowTheFloor(t *testing.T) {
	tests := []struct{ n, size, want int }{
		{1, 2, 1},
		{2, 1, 2},
		{1, 0, 0}, // a template that keeps nothing idle keeps no kernel either
		{0, 2, 0},
	}
	for _, tc := range tests {
		if got := sessionKernels(tc.n, tc.size); got != tc.want {
			t.Errorf("sessionKernels(%d, %d) = %d, want %d", tc.n, tc.size, got, tc.want)
		}
	}
}
