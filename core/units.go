package core

import (
	"math"
	"time"
)

// Scaled is n units as a Duration, saturated at the largest Durations. A
// door turns a wire number (timeout_ms, ttl_s, a Connect-Timeout-Ms
// header) into the core's input with it, so that a number past a
// Duration's range meets the core's range check as a huge duration
// instead of wrapping round to a small one the check would accept.
func Scaled(n int64, unit time.Duration) time.Duration {
	switch {
	case unit <= 0:
		return 0
	case n > math.MaxInt64/int64(unit):
		return math.MaxInt64
	case n < math.MinInt64/int64(unit):
		return math.MinInt64
	}
	return time.Duration(n) * unit
}
