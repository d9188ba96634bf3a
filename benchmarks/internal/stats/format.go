package stats

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// FormatMS is d in milliseconds with two decimals, as the tables print it.
func FormatMS(d time.Duration) string { return fmt.Sprintf("%.2f", MS(d)) }

// FormatP50 is the median of s, or the one value marked as such.
func FormatP50(s []time.Duration) string {
	switch {
	case len(s) == 0:
		return "-"
	case !supports(len(s), 0.5):
		return "1 run " + FormatMS(s[0])
	}
	return FormatMS(Percentile(s, 0.5))
}

// FormatUpper is the p99 of s where s supports it, else "max" and the
// maximum.
func FormatUpper(s []time.Duration) string {
	if len(s) == 0 {
		return "-"
	}
	label, d := Upper(s)
	if label == "p99" {
		return FormatMS(d)
	}
	return label + " " + FormatMS(d)
}

// CountList renders counts by name, sorted by name: "a×1 b×2".
func CountList(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s×%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}

// FloatRatio is a/b, or false when either is not positive.
func FloatRatio(a, b float64) (float64, bool) {
	if a <= 0 || b <= 0 {
		return 0, false
	}
	return a / b, true
}

// Secs is d in seconds with three decimals and the unit.
func Secs(d interface{ Seconds() float64 }) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) + " s"
}

// Mean is the mean of s; 0 for none.
func Mean(s []time.Duration) time.Duration {
	if len(s) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return sum / time.Duration(len(s))
}
