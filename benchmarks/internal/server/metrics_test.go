package server

import (
	"reflect"
	"strings"
	"testing"
)

const exposition = `# HELP paddock_pool_ready Ready sandboxes.
# TYPE paddock_pool_ready gauge
paddock_pool_ready{template="node"} 3
paddock_pool_ready{template="python"} 2
paddock_run_phase_seconds_bucket{kind="pool",phase="total",template="python",le="0.005"} 4
paddock_pool_snapshot_state{state="building",template="python"} 0
paddock_pool_snapshot_state{state="failed",template="node"} 0
paddock_pool_snapshot_state{state="off",template="node"} 1
paddock_pool_snapshot_state{state="ready",template="python"} 1
`

func TestFilterPoolMetrics(t *testing.T) {
	got, err := filterPoolMetrics(strings.NewReader(exposition))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`paddock_pool_ready{template="node"} 3`,
		`paddock_pool_ready{template="python"} 2`,
		`paddock_pool_snapshot_state{state="building",template="python"} 0`,
		`paddock_pool_snapshot_state{state="failed",template="node"} 0`,
		`paddock_pool_snapshot_state{state="off",template="node"} 1`,
		`paddock_pool_snapshot_state{state="ready",template="python"} 1`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestSnapshotState(t *testing.T) {
	samples, _ := filterPoolMetrics(strings.NewReader(exposition))
	tests := []struct{ template, want string }{
		{"python", "ready"},
		{"node", "off"},
		{"ruby", ""},
	}
	for _, tt := range tests {
		t.Run(tt.template, func(t *testing.T) {
			if got := SnapshotState(samples, tt.template); got != tt.want {
				t.Errorf("snapshotState(%q) = %q, want %q", tt.template, got, tt.want)
			}
		})
	}
}
