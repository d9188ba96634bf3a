package report

import (
	"testing"
	"time"
)

func TestThroughputRate(t *testing.T) {
	if got := (Throughput{Runs: 30, Elapsed: 2 * time.Second}).Rate(); got != 15 {
		t.Errorf("rate = %v, want 15", got)
	}
	if got := (Throughput{Runs: 30}).Rate(); got != 0 {
		t.Errorf("rate without elapsed time = %v, want 0", got)
	}
}
