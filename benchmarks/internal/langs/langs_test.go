package langs

import (
	"testing"
)

func TestProbeChecks(t *testing.T) {
	py, _ := ByName("python")
	node, _ := ByName("node")
	tests := []struct {
		name string
		p    Probe
		out  string
		want bool
	}{
		{"print(1)", py.Probes[0], "1\n", true},
		{"print(1) wrong", py.Probes[0], "2\n", false},
		{"pandas version", py.Probes[1], "1.5.3\n", true},
		{"pandas dev version", py.Probes[1], "2.2.0rc1\n", true},
		{"pandas traceback", py.Probes[1], "", false},
		{"zlib", node.Probes[1], "9\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.OK(tt.out); got != tt.want {
				t.Errorf("ok(%q) = %v, want %v", tt.out, got, tt.want)
			}
		})
	}
}
