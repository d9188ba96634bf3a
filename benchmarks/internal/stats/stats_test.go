package stats

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	tests := []struct {
		name string
		s    []time.Duration
		p    float64
		want time.Duration
	}{
		{"empty", nil, 0.5, 0},
		{"one sample", ms(7), 0.99, 7 * time.Millisecond},
		{"median of odd count, unsorted", ms(5, 1, 3), 0.5, 3 * time.Millisecond},
		{"median of even count rounds up", ms(4, 1, 3, 2), 0.5, 3 * time.Millisecond},
		{"p99 of 100 is the 99th", ms(seq(1, 100)...), 0.99, 99 * time.Millisecond},
		{"p99 of 10 is the max", ms(seq(1, 10)...), 0.99, 10 * time.Millisecond},
		{"p0 is the min", ms(9, 2, 5), 0, 2 * time.Millisecond},
		{"p100 is the max", ms(9, 2, 5), 1, 9 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Percentile(tt.s, tt.p); got != tt.want {
				t.Errorf("percentile(%v, %v) = %v, want %v", tt.s, tt.p, got, tt.want)
			}
		})
	}
}

func TestPercentileLeavesInputAlone(t *testing.T) {
	s := []time.Duration{3, 1, 2}
	Percentile(s, 0.5)
	if s[0] != 3 || s[1] != 1 || s[2] != 2 {
		t.Errorf("input reordered: %v", s)
	}
}

func TestRowCountsOnlyMatchingStarts(t *testing.T) {
	r := Row{Samples: []Sample{
		{D: 10 * time.Millisecond, Start: "restore", Counted: true, Timing: &Timing{StartMS: 4}},
		{D: 2000 * time.Millisecond, Start: "cold", Counted: false, Timing: &Timing{StartMS: 1900}},
		{D: 12 * time.Millisecond, Start: "restore", Counted: true, Timing: &Timing{StartMS: 6}},
	}, Mismatches: 1}
	if got := len(r.Counted()); got != 2 {
		t.Errorf("counted %d samples, want 2", got)
	}
	if label, got := Upper(r.Counted()); label != "max" || got != 12*time.Millisecond {
		t.Errorf("upper = %s %v, want max 12ms", label, got)
	}
	if got := r.ServerStartP50(); got != 6 {
		t.Errorf("server start p50 = %v, want 6", got)
	}
	if got := (Row{}).ServerStartP50(); got != -1 {
		t.Errorf("server start p50 without timings = %v, want -1", got)
	}
}

func TestSupports(t *testing.T) {
	tests := []struct {
		n    int
		p    float64
		want bool
	}{
		{0, 0.5, false},
		{1, 0.5, false},
		{2, 0.5, true},
		{99, 0.99, false},
		{100, 0.99, true},
		{1000, 0.99, true},
		{9, 0.9, false},
		{10, 0.9, true},
		{1000, 1, false},
	}
	for _, tt := range tests {
		if got := supports(tt.n, tt.p); got != tt.want {
			t.Errorf("supports(%d, %v) = %v, want %v", tt.n, tt.p, got, tt.want)
		}
	}
}

func TestUpperIsP99OnlyFrom100Samples(t *testing.T) {
	tests := []struct {
		name      string
		s         []time.Duration
		wantLabel string
		want      time.Duration
		printed   string
	}{
		{"none", nil, "max", 0, "-"},
		{"5 samples: max", ms(5, 1, 9, 3, 2), "max", 9 * time.Millisecond, "max 9.00"},
		{"99 samples: max", ms(seq(1, 99)...), "max", 99 * time.Millisecond, "max 99.00"},
		{"100 samples: p99", ms(seq(1, 100)...), "p99", 99 * time.Millisecond, "99.00"},
		{"200 samples: p99", ms(seq(1, 200)...), "p99", 198 * time.Millisecond, "198.00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			label, got := Upper(tt.s)
			if label != tt.wantLabel || got != tt.want {
				t.Errorf("upper = %s %v, want %s %v", label, got, tt.wantLabel, tt.want)
			}
			if p := FormatUpper(tt.s); p != tt.printed {
				t.Errorf("printed %q, want %q", p, tt.printed)
			}
		})
	}
}

func TestFmtP50NeedsTwoSamples(t *testing.T) {
	tests := []struct {
		s    []time.Duration
		want string
	}{
		{nil, "-"},
		{[]time.Duration{7 * time.Millisecond}, "1 run 7.00"},
		{[]time.Duration{7 * time.Millisecond, 3 * time.Millisecond}, "7.00"},
	}
	for _, tt := range tests {
		if got := FormatP50(tt.s); got != tt.want {
			t.Errorf("fmtP50(%v) = %q, want %q", tt.s, got, tt.want)
		}
	}
}

func seq(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// ms is a sample of the given milliseconds.
func ms(vs ...int) []time.Duration {
	var out []time.Duration
	for _, v := range vs {
		out = append(out, time.Duration(v)*time.Millisecond)
	}
	return out
}
