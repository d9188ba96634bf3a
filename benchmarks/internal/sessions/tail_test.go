package sessions

import (
	"testing"
	"time"
)

func TestPerCell(t *testing.T) {
	if got := perCell(3*time.Millisecond, 1000); got != 3 {
		t.Fatalf("perCell = %v µs, want 3", got)
	}
	if got := perCell(time.Second, 0); got != 0 {
		t.Fatalf("perCell with no cells = %v, want 0", got)
	}
}
