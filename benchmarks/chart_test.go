package main

import (
	"bytes"
	"image/color"
	"image/png"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

func TestWriteChartIsAValidPNG(t *testing.T) {
	tests := []struct {
		name       string
		rows       []stats.Row
		wantHeight int
	}{
		{"no rows", nil, titleHeight + rowHeight + axisHeight},
		{"rows with and without samples", testReport().Rows, titleHeight + 3*rowHeight + axisHeight},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := writeChart(&buf, "title", tt.rows); err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(&buf)
			if err != nil {
				t.Fatalf("not a PNG: %v", err)
			}
			if b := img.Bounds(); b.Dx() != chartWidth || b.Dy() != tt.wantHeight {
				t.Errorf("size %v, want %dx%d", b.Size(), chartWidth, tt.wantHeight)
			}
		})
	}
}

func TestChartBarsGrowWithLatency(t *testing.T) {
	rows := []stats.Row{
		{Lang: "python", Probe: "p", Mode: stats.ModePool, Samples: []stats.Sample{{D: 2 * time.Millisecond, Counted: true}}},
		{Lang: "python", Probe: "p", Mode: stats.ModeCold, Samples: []stats.Sample{{D: 2000 * time.Millisecond, Counted: true}}},
	}
	img := renderChart("t", rows)
	barLen := func(i int, c color.RGBA) int {
		y := titleHeight + i*rowHeight + rowHeight/2
		n := 0
		for x := labelWidth; x < chartWidth; x++ {
			if img.RGBAAt(x, y) == c {
				n++
			}
		}
		return n
	}
	pool, cold := barLen(0, modeColors[stats.ModePool]), barLen(1, modeColors[stats.ModeCold])
	if pool == 0 || cold == 0 {
		t.Fatalf("bars missing: pool %d px, cold %d px", pool, cold)
	}
	// 1 ms … 10 s is four decades; 2 ms and 2 s are three decades apart.
	if want := 3 * (chartWidth - valueWidth - labelWidth) / 4; cold-pool < want-2 || cold-pool > want+2 {
		t.Errorf("cold bar %d px longer than pool bar, want %d (log scale)", cold-pool, want)
	}
}

func TestDecades(t *testing.T) {
	tests := []struct {
		name   string
		p50s   []time.Duration
		lo, hi float64
	}{
		{"one value", []time.Duration{5 * time.Millisecond}, 1, 10},
		{"exact power of ten", []time.Duration{10 * time.Millisecond}, 10, 100},
		{"spread", []time.Duration{300 * time.Microsecond, 2500 * time.Millisecond}, 0.1, 10000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rows []stats.Row
			for _, d := range tt.p50s {
				rows = append(rows, stats.Row{Samples: []stats.Sample{{D: d, Counted: true}}})
			}
			lo, hi := decades(rows)
			if !near(lo, tt.lo) || !near(hi, tt.hi) {
				t.Errorf("decades = %v, %v; want %v, %v", lo, hi, tt.lo, tt.hi)
			}
		})
	}
}

func near(a, b float64) bool { return a/b > 0.999999 && a/b < 1.000001 }
