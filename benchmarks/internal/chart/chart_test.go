package chart

import (
	"bytes"
	"image/color"
	"image/png"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/report"
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
			if err := WriteLatency(&buf, "title", tt.rows); err != nil {
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

func TestRenderSteadyChart(t *testing.T) {
	points := steadyFixture()
	node := steadyFixture()
	for i := range node {
		node[i].Template = "node"
	}
	empty := points[len(points)-1]
	empty.Target, empty.T.Runs = report.TargetEmpty, 400
	empty.T.Latencies = []time.Duration{800 * time.Millisecond, 900 * time.Millisecond, 2 * time.Second}
	img := renderSteadyChart("title", append(append(points, node...), empty))
	if b := img.Bounds(); b.Dx() != steadyChartWid || b.Dy() != steadyTitleH+steadyLegendH+2*steadyPanelH {
		t.Fatalf("bounds %v", b)
	}
	count := map[[4]uint8]int{}
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			c := img.RGBAAt(x, y)
			count[[4]uint8{c.R, c.G, c.B, c.A}]++
		}
	}
	for name, c := range map[string][4]uint8{"paddock": {colPaddock.R, colPaddock.G, colPaddock.B, 0xff},
		"paddock p99": {colPaddockP99.R, colPaddockP99.G, colPaddockP99.B, 0xff}, "raw": {colRaw.R, colRaw.G, colRaw.B, 0xff},
		"raw p99": {colRawP99.R, colRawP99.G, colRawP99.B, 0xff}, "empty": {colEmpty.R, colEmpty.G, colEmpty.B, 0xff},
		"empty p99": {colEmptyP99.R, colEmptyP99.G, colEmptyP99.B, 0xff}} {
		// The legend's swatch is 20×10 (200 pixels); the lines and markers
		// add more (a lone point's marker is 7×7).
		if count[c] <= 240 {
			t.Errorf("%s: %d pixels of its colour", name, count[c])
		}
	}
	var buf bytes.Buffer
	if err := WriteSteady(&buf, "empty", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(&buf); err != nil {
		t.Errorf("empty chart: %v", err)
	}
}

func TestNiceCeil(t *testing.T) {
	for v, want := range map[float64]float64{0.3: 0.5, 1: 1, 1.2: 2, 2.2: 2.5, 3.3: 5, 7: 10, 16: 20, 230: 250} {
		if got := niceCeil(v); got != want {
			t.Errorf("niceCeil(%v) = %v, want %v", v, got, want)
		}
	}
}

func testReport() report.Report {
	return report.Report{
		Rows: []stats.Row{
			{Lang: "python", Probe: "print(1)", Mode: stats.ModeNative, Samples: []stats.Sample{{D: 20 * time.Millisecond, Counted: true}}},
			{Lang: "python", Probe: "print(1)", Mode: stats.ModePool, Mismatches: 1, Samples: []stats.Sample{
				{D: 3500 * time.Microsecond, Start: "pool", Counted: true, Timing: &stats.Timing{QueueMS: 0.01, AcquireMS: 0.02, ExecMS: 2.5, TotalMS: 3}},
				{D: 150 * time.Millisecond, Start: "restore", Counted: false, Timing: &stats.Timing{StartMS: 120, TotalMS: 149}},
			}},
			{Lang: "node", Probe: "console.log(1)", Mode: stats.ModeRestore, Note: "n/a: not snapshotted"},
			{Lang: "node", Probe: "console.log(1)", Mode: stats.ModeRaw, Samples: []stats.Sample{
				{D: 400 * time.Millisecond, Counted: true, Delete: 50 * time.Millisecond},
				{D: 420 * time.Millisecond, Counted: true, Delete: 70 * time.Millisecond},
			}},
		},
		Throughput: []report.Throughput{{Lang: "python", Target: report.TargetPaddock, Concurrency: 2, Elapsed: 2 * time.Second, Runs: 3,
			Starts: map[string]int{"pool": 3}, Latencies: []time.Duration{100 * time.Millisecond, 110 * time.Millisecond, 120 * time.Millisecond}}},
		Memory: []report.MemRow{{Lang: "python", Start: "restore", Samples: []report.MemSample{{ID: "pd-0123456789abcdef", Usage: 30 << 20, RSS: 5 << 20, Shmem: 20 << 20}}}},
	}
}

// steadyFixture is python at 1, 2 and 16 clients on Paddock and raw.
func steadyFixture() []report.SteadyPoint {
	ms := func(v ...int) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	pt := func(target string, clients, runs int, secs float64, cpu report.CPUUsage, lat []time.Duration) report.SteadyPoint {
		return report.SteadyPoint{Template: "python", Language: "python", Target: target, Clients: clients, CPU: cpu,
			LoadBefore: "1.00 2.00 3.00", LoadAfter: "1.50 2.00 3.00",
			T: report.Throughput{Lang: "python", Target: target, Concurrency: clients, Runs: runs, Elapsed: time.Duration(secs * float64(time.Second)),
				Latencies: lat, BusyByStatus: map[int]int{503: clients - 1}}}
	}
	return []report.SteadyPoint{
		pt(report.TargetPaddock, 1, 120, 60, report.CPUUsage{Machine: 30, Bench: 6, Server: 6, Sandboxes: 18}, ms(100, 200, 300)),
		pt(report.TargetRaw, 1, 60, 60, report.CPUUsage{Machine: 40, Bench: 1, Children: 39}, ms(900, 1000, 1100)),
		pt(report.TargetPaddock, 2, 240, 60, report.CPUUsage{Machine: 60, Bench: 12}, ms(400, 500)),
		pt(report.TargetRaw, 2, 100, 60, report.CPUUsage{Machine: 60}, ms(1000)),
		pt(report.TargetPaddock, 16, 180, 60, report.CPUUsage{Machine: 90}, ms(5000)),
	}
}
