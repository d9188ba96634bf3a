package chart

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"

	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// Chart geometry, in pixels.
const (
	chartWidth  = 1000
	labelWidth  = 270 // the row labels, left of the plot
	valueWidth  = 90  // room for the value after the longest bar
	rowHeight   = 20
	barHeight   = 14
	titleHeight = 36
	axisHeight  = 30
)

var modeColors = map[string]color.RGBA{
	stats.ModeNative:      {0x80, 0x80, 0x80, 0xff},
	stats.ModeHost:        {0xc0, 0xc0, 0xc0, 0xff},
	stats.ModeRaw:         {0x8c, 0x56, 0x4b, 0xff},
	stats.ModeRawRestore:  {0xc4, 0x9c, 0x94, 0xff},
	stats.ModeCold:        {0xd6, 0x27, 0x28, 0xff},
	stats.ModeRestore:     {0xff, 0x7f, 0x0e, 0xff},
	stats.ModePool:        {0x2c, 0xa0, 0x2c, 0xff},
	stats.ModeBusy:        {0x98, 0xdf, 0x8a, 0xff},
	stats.ModeSession:     {0x1f, 0x77, 0xb4, 0xff},
	stats.ModeRuncCold:    {0x94, 0x67, 0xbd, 0xff},
	stats.ModeRuncPool:    {0xc5, 0xb0, 0xd5, 0xff},
	stats.ModeRuncSession: {0x17, 0xbe, 0xcf, 0xff},

	stats.ModeJupyterPaddock: {0x17, 0xbe, 0xcf, 0xff},
	stats.ModeJupyterNative:  {0x9e, 0xda, 0xe5, 0xff},
	stats.ModeJupyterNoDelay: {0x5f, 0xa8, 0xb5, 0xff},
}

// WriteLatency draws the rows' p50s as horizontal bars on a log scale and
// encodes the image as PNG.
func WriteLatency(w io.Writer, title string, rows []stats.Row) error {
	return png.Encode(w, renderChart(title, rows))
}

func renderChart(title string, rows []stats.Row) *image.RGBA {
	var bars []stats.Row
	for _, r := range rows {
		if r.P50() > 0 {
			bars = append(bars, r)
		}
	}
	height := titleHeight + max(len(bars), 1)*rowHeight + axisHeight
	img := image.NewRGBA(image.Rect(0, 0, chartWidth, height))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	text(img, 10, 22, color.Black, title)
	if len(bars) == 0 {
		text(img, 10, titleHeight+14, color.Black, "no samples")
		return img
	}

	lo, hi := decades(bars)
	plotLeft, plotRight := labelWidth, chartWidth-valueWidth
	x := func(d time.Duration) int {
		f := (math.Log10(stats.MS(d)) - math.Log10(lo)) / (math.Log10(hi) - math.Log10(lo))
		return plotLeft + int(math.Round(f*float64(plotRight-plotLeft)))
	}
	plotBottom := titleHeight + len(bars)*rowHeight
	grid := color.RGBA{0xdd, 0xdd, 0xdd, 0xff}
	for v := lo; v <= hi*1.0001; v *= 10 {
		gx := x(time.Duration(v * float64(time.Millisecond)))
		fill(img, image.Rect(gx, titleHeight-4, gx+1, plotBottom+4), grid)
		label := axisLabel(v)
		text(img, gx-len(label)*7/2, plotBottom+20, color.Black, label)
	}
	for i, r := range bars {
		top := titleHeight + i*rowHeight + (rowHeight-barHeight)/2
		c, ok := modeColors[r.Mode]
		if !ok {
			c = color.RGBA{0x55, 0x55, 0x55, 0xff}
		}
		end := max(x(r.P50()), plotLeft+1)
		fill(img, image.Rect(plotLeft, top, end, top+barHeight), c)
		label := fmt.Sprintf("%s %s | %s", r.Lang, r.Probe, r.Mode)
		if len(label)*7 > labelWidth-10 {
			label = label[:(labelWidth-10)/7-2] + ".."
		}
		text(img, labelWidth-8-len(label)*7, top+11, color.Black, label)
		text(img, end+5, top+11, color.Black, axisLabelValue(stats.MS(r.P50())))
	}
	fill(img, image.Rect(plotLeft, titleHeight-4, plotLeft+1, plotBottom+4), color.Black)
	return img
}

// decades returns the powers of ten, in milliseconds, around the bars' p50s.
func decades(bars []stats.Row) (lo, hi float64) {
	minV, maxV := math.Inf(1), 0.0
	for _, r := range bars {
		v := stats.MS(r.P50())
		minV, maxV = min(minV, v), max(maxV, v)
	}
	lo = math.Pow(10, math.Floor(math.Log10(minV)))
	hi = math.Pow(10, math.Ceil(math.Log10(maxV)))
	if hi <= lo {
		hi = lo * 10
	}
	return lo, hi
}

func axisLabel(ms float64) string {
	if ms >= 1000 {
		return fmt.Sprintf("%g s", ms/1000)
	}
	return fmt.Sprintf("%g ms", ms)
}

func axisLabelValue(ms float64) string {
	switch {
	case ms >= 1000:
		return fmt.Sprintf("%.2f s", ms/1000)
	case ms >= 10:
		return fmt.Sprintf("%.0f ms", ms)
	default:
		return fmt.Sprintf("%.2f ms", ms)
	}
}

func fill(img *image.RGBA, r image.Rectangle, c color.Color) {
	draw.Draw(img, r, image.NewUniform(c), image.Point{}, draw.Src)
}

// text draws s with its baseline at y.
func text(img *image.RGBA, x, y int, c color.Color, s string) {
	d := &font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}
