package templates

import "testing"

func TestLimitsUnits(t *testing.T) {
	l := Limits{MemoryMB: 512, DiskMB: 256, TimeoutMS: 10000}
	if got := l.MemoryBytes(); got != 536870912 {
		t.Errorf("MemoryBytes = %d, want 536870912", got)
	}
	if got := l.DiskBytes(); got != 268435456 {
		t.Errorf("DiskBytes = %d, want 268435456", got)
	}
	if got := l.Timeout().String(); got != "10s" {
		t.Errorf("Timeout = %s, want 10s", got)
	}
}
