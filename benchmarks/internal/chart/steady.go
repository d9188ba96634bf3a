package chart

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"
	"slices"

	"github.com/paddock-dev/paddock/benchmarks/internal/report"
)

// The steady chart: one row of two panels per template, runs/s against
// clients on the left and p50/p99 against clients on the right, Paddock,
// raw runsc and empty sandboxes as lines (the empty sandboxes usually a
// single point, at the highest client count). Clients are on a log2 axis
// (1, 2, 4, 8, 16 are evenly spaced).

const (
	steadyPanelW   = 520
	steadyPanelH   = 300
	steadyMarginL  = 60
	steadyMarginR  = 20
	steadyMarginT  = 40
	steadyMarginB  = 40
	steadyTitleH   = 36
	steadyLegendH  = 24
	steadyChartWid = 2 * steadyPanelW
)

// steadySeries colours: Paddock blue, raw brown, empty sandboxes grey;
// p99 lighter than p50.
var (
	colPaddock    = color.RGBA{0x1f, 0x77, 0xb4, 0xff}
	colPaddockP99 = color.RGBA{0x9e, 0xc9, 0xe8, 0xff}
	colRaw        = color.RGBA{0x8c, 0x56, 0x4b, 0xff}
	colRawP99     = color.RGBA{0xd9, 0xb8, 0xb1, 0xff}
	colEmpty      = color.RGBA{0x6e, 0x6e, 0x6e, 0xff}
	colEmptyP99   = color.RGBA{0xc4, 0xc4, 0xc4, 0xff}
)

// steadyColours are the p50 and p99 colours of a target's series.
func steadyColours(target string) (p50, p99 color.RGBA) {
	switch target {
	case report.TargetRaw:
		return colRaw, colRawP99
	case report.TargetEmpty:
		return colEmpty, colEmptyP99
	}
	return colPaddock, colPaddockP99
}

type series struct {
	name string
	col  color.RGBA
	x    []int     // clients
	y    []float64 // value at each
}

// WriteSteady draws the steady points and encodes the image as PNG.
func WriteSteady(w io.Writer, title string, points []report.SteadyPoint) error {
	return png.Encode(w, renderSteadyChart(title, points))
}

func renderSteadyChart(title string, points []report.SteadyPoint) *image.RGBA {
	var templates []string
	for _, p := range points {
		if !slices.Contains(templates, p.Template) {
			templates = append(templates, p.Template)
		}
	}
	height := steadyTitleH + steadyLegendH + max(len(templates), 1)*steadyPanelH
	img := image.NewRGBA(image.Rect(0, 0, steadyChartWid, height))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	text(img, 10, 22, color.Black, title)
	legend := []series{{name: "paddock runs/s, p50", col: colPaddock}, {name: "paddock p99 (max < 100 runs)", col: colPaddockP99},
		{name: "raw run+delete runs/s, p50", col: colRaw}, {name: "raw p99", col: colRawP99}}
	if slices.ContainsFunc(points, func(p report.SteadyPoint) bool { return p.Target == report.TargetEmpty }) {
		legend = append(legend, series{name: "empty runs/s, p50", col: colEmpty}, series{name: "empty p99", col: colEmptyP99})
	}
	lx := 10
	for _, s := range legend {
		fill(img, image.Rect(lx, steadyTitleH+4, lx+20, steadyTitleH+14), s.col)
		text(img, lx+26, steadyTitleH+14, color.Black, s.name)
		lx += 26 + len(s.name)*7 + 16
	}
	if len(templates) == 0 {
		text(img, 10, steadyTitleH+steadyLegendH+20, color.Black, "no points")
		return img
	}
	for i, t := range templates {
		top := steadyTitleH + steadyLegendH + i*steadyPanelH
		var rate, lat []series
		for _, target := range []string{report.TargetPaddock, report.TargetRaw, report.TargetEmpty} {
			col, col99 := steadyColours(target)
			r := series{name: report.ShortTarget(target), col: col}
			p50 := series{name: report.ShortTarget(target) + " p50", col: col}
			p99 := series{name: report.ShortTarget(target) + " p99", col: col99}
			for _, p := range points {
				if p.Template != t || p.Target != target {
					continue
				}
				_, up := p.P99()
				r.x, r.y = append(r.x, p.Clients), append(r.y, p.T.Rate())
				p50.x, p50.y = append(p50.x, p.Clients), append(p50.y, p.P50().Seconds())
				p99.x, p99.y = append(p99.x, p.Clients), append(p99.y, up.Seconds())
			}
			rate = append(rate, r)
			lat = append(lat, p99, p50)
		}
		plotPanel(img, image.Rect(0, top, steadyPanelW, top+steadyPanelH), t+": runs/s", "runs/s", rate)
		plotPanel(img, image.Rect(steadyPanelW, top, 2*steadyPanelW, top+steadyPanelH), t+": latency (p50, p99)", "s", lat)
	}
	return img
}

// plotPanel draws series as lines in r: clients on a log2 x axis, the
// values on a linear y axis from 0.
func plotPanel(img *image.RGBA, r image.Rectangle, title, unit string, ss []series) {
	text(img, r.Min.X+steadyMarginL, r.Min.Y+22, color.Black, title)
	plot := image.Rect(r.Min.X+steadyMarginL, r.Min.Y+steadyMarginT, r.Max.X-steadyMarginR, r.Max.Y-steadyMarginB)
	minC, maxC, maxY := math.MaxInt, 0, 0.0
	for _, s := range ss {
		for i, c := range s.x {
			minC, maxC, maxY = min(minC, c), max(maxC, c), max(maxY, s.y[i])
		}
	}
	fill(img, image.Rect(plot.Min.X, plot.Min.Y, plot.Min.X+1, plot.Max.Y), color.Black)
	fill(img, image.Rect(plot.Min.X, plot.Max.Y, plot.Max.X, plot.Max.Y+1), color.Black)
	if maxC == 0 || maxY <= 0 {
		text(img, plot.Min.X+10, plot.Min.Y+20, color.Black, "no data")
		return
	}
	top := niceCeil(maxY)
	lo, hi := math.Log2(float64(minC)), math.Log2(float64(maxC))
	if hi <= lo {
		hi = lo + 1
	}
	px := func(c int) int {
		return plot.Min.X + int(math.Round((math.Log2(float64(c))-lo)/(hi-lo)*float64(plot.Dx()-10)))
	}
	py := func(v float64) int { return plot.Max.Y - int(math.Round(v/top*float64(plot.Dy()))) }
	grid := color.RGBA{0xdd, 0xdd, 0xdd, 0xff}
	for k := 0; k <= 4; k++ {
		v := top * float64(k) / 4
		y := py(v)
		fill(img, image.Rect(plot.Min.X+1, y, plot.Max.X, y+1), grid)
		label := fmt.Sprintf("%g", round3(v))
		text(img, plot.Min.X-8-len(label)*7, y+4, color.Black, label)
	}
	text(img, r.Min.X+4, plot.Min.Y-6, color.Black, unit)
	for c := minC; c <= maxC; c *= 2 {
		x := px(c)
		fill(img, image.Rect(x, plot.Max.Y, x+1, plot.Max.Y+5), color.Black)
		label := fmt.Sprint(c)
		text(img, x-len(label)*7/2, plot.Max.Y+18, color.Black, label)
	}
	text(img, plot.Max.X-50, plot.Max.Y+34, color.Black, "clients")
	for _, s := range ss {
		for i := range s.x {
			x, y := px(s.x[i]), py(s.y[i])
			fill(img, image.Rect(x-3, y-3, x+4, y+4), s.col)
			if i > 0 {
				line(img, px(s.x[i-1]), py(s.y[i-1]), x, y, s.col)
			}
		}
	}
}

// niceCeil is the smallest of 1, 2, 2.5 or 5 times a power of ten at or
// above v.
func niceCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= v*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// line draws a two-pixel-wide line from (x0, y0) to (x1, y1).
func line(img *image.RGBA, x0, y0, x1, y1 int, c color.RGBA) {
	n := max(abs(x1-x0), abs(y1-y0), 1)
	for i := 0; i <= n; i++ {
		x := x0 + (x1-x0)*i/n
		y := y0 + (y1-y0)*i/n
		img.SetRGBA(x, y, c)
		img.SetRGBA(x, y+1, c)
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
