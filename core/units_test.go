package core

import (
	"math"
	"testing"
	"time"
)

func TestScaled(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		unit time.Duration
		want time.Duration
	}{
		{2500, time.Millisecond, 2500 * time.Millisecond},
		{-3, time.Second, -3 * time.Second},
		{0, time.Second, 0},
		{9223372036, time.Second, 9223372036 * time.Second},
		{9223372037, time.Second, math.MaxInt64},
		{18446744073710, time.Millisecond, math.MaxInt64}, // would wrap to 448µs
		{-18446744073710, time.Millisecond, math.MinInt64},
		{math.MaxInt64, time.Nanosecond, math.MaxInt64},
	} {
		if got := Scaled(tc.n, tc.unit); got != tc.want {
			t.Errorf("Scaled(%d, %v) = %v, want %v", tc.n, tc.unit, got, tc.want)
		}
	}
}
