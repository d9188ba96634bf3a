package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"image/png"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
)

// steadyFixture is python at 1, 2 and 16 clients on Paddock and raw.
func steadyFixture() []steadyPoint {
	ms := func(v ...int) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	pt := func(target string, clients, runs int, secs float64, cpu cpuUsage, lat []time.Duration) steadyPoint {
		return steadyPoint{Template: "python", Language: "python", Target: target, Clients: clients, CPU: cpu,
			LoadBefore: "1.00 2.00 3.00", LoadAfter: "1.50 2.00 3.00",
			T: throughput{Lang: "python", Target: target, Concurrency: clients, Runs: runs, Elapsed: time.Duration(secs * float64(time.Second)),
				Latencies: lat, BusyByStatus: map[int]int{503: clients - 1}}}
	}
	return []steadyPoint{
		pt(targetPaddock, 1, 120, 60, cpuUsage{Machine: 30, Bench: 6, Server: 6, Sandboxes: 18}, ms(100, 200, 300)),
		pt(targetRaw, 1, 60, 60, cpuUsage{Machine: 40, Bench: 1, Children: 39}, ms(900, 1000, 1100)),
		pt(targetPaddock, 2, 240, 60, cpuUsage{Machine: 60, Bench: 12}, ms(400, 500)),
		pt(targetRaw, 2, 100, 60, cpuUsage{Machine: 60}, ms(1000)),
		pt(targetPaddock, 16, 180, 60, cpuUsage{Machine: 90}, ms(5000)),
	}
}

func TestSteadyVerdicts(t *testing.T) {
	vs := steadyVerdicts(steadyFixture())
	if len(vs) != 3 {
		t.Fatalf("%d verdicts, want 3", len(vs))
	}
	one, two, sixteen := vs[0], vs[1], vs[2]
	// 2 runs/s against 1: 2×, meets; (30 - 6) / 120 = 0.2 CPU-s, meets.
	if !one.HasRaw || one.RawRatio != 2 || !one.MeetsRaw || one.CPUPerRun != 0.2 || !one.MeetsCPU || one.AtPeak {
		t.Errorf("1 client: %+v", one)
	}
	// 4 runs/s against 5/3: 2.4×; (60 - 12) / 240 = 0.2.
	if !two.MeetsRaw || two.RawRatio != 2.4 || two.CPUPerRun != 0.2 {
		t.Errorf("2 clients: %+v", two)
	}
	// No raw point; 3 runs/s of a 4 runs/s peak: 0.75, misses; 0.5 CPU-s, misses.
	if sixteen.HasRaw || sixteen.MeetsRaw || !sixteen.AtPeak || sixteen.PeakShare != 0.75 || sixteen.MeetsPeak ||
		sixteen.CPUPerRun != 0.5 || sixteen.MeetsCPU {
		t.Errorf("16 clients: %+v", sixteen)
	}
}

// An empty-sandbox point beside raw at the same clients sets the
// ceiling: its rate over raw's.
func TestSteadyCeiling(t *testing.T) {
	pt := func(target string, runs int, cpu cpuUsage) steadyPoint {
		return steadyPoint{Template: "python-slim", Language: "python", Target: target, Clients: 16, CPU: cpu,
			T: throughput{Lang: "python-slim", Target: target, Concurrency: 16, Runs: runs, Elapsed: 10 * time.Second,
				Latencies: []time.Duration{time.Second}}}
	}
	points := []steadyPoint{
		pt(targetEmpty, 50, cpuUsage{Machine: 20, Children: 19}),
		pt(targetPaddock, 30, cpuUsage{Machine: 20}),
		pt(targetRaw, 20, cpuUsage{Machine: 20, Children: 18}),
	}
	vs := steadyVerdicts(points)
	if len(vs) != 1 || vs[0].Empty == nil || vs[0].Ceiling != 2.5 || vs[0].RawRatio != 1.5 {
		t.Fatalf("verdicts = %+v", vs)
	}
	if got := points[0].CPU.attributedPerRun(targetEmpty, 50); got != 0.38 {
		t.Errorf("empty point's attributed CPU per run = %v, want the reaped runsc processes' 0.38", got)
	}
	var buf bytes.Buffer
	printSteady(&buf, points)
	for _, want := range []string{"python-slim    empty       16", "2.50×", "1.50×"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, buf.String())
		}
	}
	buf.Reset()
	if err := writeSteadyCSV(&buf, points); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(steadyCSVHeader, "empty_over_raw")
	if recs[1][slices.Index(steadyCSVHeader, "target")] != "empty" || recs[2][col] != "2.5" || recs[1][col] != "" {
		t.Errorf("records = %q", recs)
	}
}

func TestSteadyVerdictWithoutRuns(t *testing.T) {
	vs := steadyVerdicts([]steadyPoint{{Template: "node", Target: targetPaddock, Clients: 16, CPU: cpuUsage{Machine: 10}}})
	if len(vs) != 1 || vs[0].MeetsCPU || vs[0].AtPeak || vs[0].MeetsPeak {
		t.Errorf("verdicts = %+v", vs)
	}
}

func TestSteadyPercentiles(t *testing.T) {
	p := steadyFixture()[1]
	if got := p.p50(); got != time.Second {
		t.Errorf("p50 = %v, want 1s", got)
	}
	// Three samples do not support a p99: the maximum stands in.
	if label, d := p.p99(); label != "max" || d != 1100*time.Millisecond {
		t.Errorf("p99 = %s %v, want max 1.1s", label, d)
	}
	var many []time.Duration
	for i := 1; i <= 200; i++ {
		many = append(many, time.Duration(i)*time.Millisecond)
	}
	p.T.Latencies = many
	if label, d := p.p99(); label != "p99" || d != 198*time.Millisecond {
		t.Errorf("p99 = %s %v, want p99 198ms", label, d)
	}
}

func TestWriteSteadyCSV(t *testing.T) {
	var buf bytes.Buffer
	if err := writeSteadyCSV(&buf, steadyFixture()); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 6 || !slices.Equal(recs[0], steadyCSVHeader) {
		t.Fatalf("records = %q", recs)
	}
	col := func(rec []string, name string) string { return rec[slices.Index(steadyCSVHeader, name)] }
	first := recs[1]
	for name, want := range map[string]string{"target": "paddock", "clients": "1", "runs": "120", "runs_per_s": "2", "p50_s": "0.2",
		"p99_s": "0.3", "p99_is_max": "true", "busy_503": "0", "cpu_s_per_run_machine": "0.2", "cpu_s_per_run_attributed": "0.2",
		"paddock_over_raw": "2", "meets_2x_raw": "true", "meets_cpu_0.3": "true", "share_of_peak": "", "load_before": "1.00 2.00 3.00"} {
		if got := col(first, name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	raw := recs[2]
	if col(raw, "target") != "raw" || col(raw, "cpu_s_per_run_attributed") != "0.65" || col(raw, "paddock_over_raw") != "" {
		t.Errorf("raw row = %q", raw)
	}
	last := recs[5]
	if col(last, "share_of_peak") != "0.75" || col(last, "meets_0.9_peak") != "false" || col(last, "busy_503") != "15" {
		t.Errorf("16-client row = %q", last)
	}
}

func TestPrintSteady(t *testing.T) {
	var buf bytes.Buffer
	printSteady(&buf, steadyFixture())
	out := buf.String()
	for _, want := range []string{"== steady state:", "2.00×", "2.40×", "0.75", "meets", "misses", "1.00 2.00 3.00", "0.300 s (max)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	buf.Reset()
	printSteady(&buf, nil)
	if buf.Len() != 0 {
		t.Errorf("no points printed %q", buf.String())
	}
}

func TestRenderSteadyChart(t *testing.T) {
	points := steadyFixture()
	node := steadyFixture()
	for i := range node {
		node[i].Template = "node"
	}
	empty := points[len(points)-1]
	empty.Target, empty.T.Runs = targetEmpty, 400
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
	if err := writeSteadyChart(&buf, "empty", nil); err != nil {
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

// TestMeasureLoopKeepsGoing: past a failed run the loop goes on, counting
// it, busy answers by status, and successes; the fourth call stops it.
func TestMeasureLoopKeepsGoing(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	calls := 0
	tp, err := measureLoop(ctx, 1, time.Hour, true, func(ctx context.Context) (string, time.Duration, error) {
		calls++
		switch calls {
		case 1:
			return "", 0, errors.New("boom")
		case 2:
			return "", 0, errBusy{status: 503}
		case 4:
			cancel()
		}
		return "restore", time.Duration(calls) * time.Millisecond, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 4 || tp.Runs != 2 || tp.Errors != 1 || tp.FirstError != "boom" || tp.Busy != 1 || tp.BusyByStatus[503] != 1 ||
		tp.Starts["restore"] != 2 || !slices.Equal(tp.Latencies, []time.Duration{3 * time.Millisecond, 4 * time.Millisecond}) {
		t.Errorf("calls %d, throughput %+v", calls, tp)
	}
	// The run after the 503 cost its client the pause the 503 asked for;
	// the failed run's attempt is not counted in it.
	if len(tp.Waited) != 2 || tp.Waited[0] < busyPause {
		t.Errorf("waited %v, want 2 with the first ≥ %v", tp.Waited, busyPause)
	}
}

func TestRetryAfter(t *testing.T) {
	for v, want := range map[string]time.Duration{"": 0, "2": 2 * time.Second, " 1 ": time.Second, "-1": 0, "soon": 0,
		"Wed, 21 Oct 2026 07:28:00 GMT": 0} {
		if got := retryAfter(v); got != want {
			t.Errorf("retryAfter(%q) = %v, want %v", v, got, want)
		}
	}
	if got := busyPauseFor(errBusy{status: 503, retryAfter: time.Minute}); got != 5*time.Second {
		t.Errorf("capped pause = %v, want 5s", got)
	}
	if got := busyPauseFor(errBusy{status: 429}); got != 20*time.Millisecond {
		t.Errorf("pause without Retry-After = %v, want 20ms", got)
	}
}

func TestParseClients(t *testing.T) {
	got, err := parseClients("1,2, 4,8,16")
	if err != nil || !slices.Equal(got, []int{1, 2, 4, 8, 16}) {
		t.Errorf("parseClients = %v, %v", got, err)
	}
	for _, bad := range []string{"", "0", "1,-2", "two"} {
		if _, err := parseClients(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestSteadyCode(t *testing.T) {
	for _, c := range []struct{ lang, code, want string }{{"python", "print(7)", "7\n"}, {"node", "console.log(7)", "7\n"}} {
		code, want, ok := steadyCode(c.lang, 7)
		if !ok || code != c.code || want != c.want {
			t.Errorf("%s: %q %q %v", c.lang, code, want, ok)
		}
	}
	if _, _, ok := steadyCode("ruby", 1); ok {
		t.Error("ruby: ok")
	}
}

// TestShippedServerArgs: the steady server gets `make run`'s flags and
// only the bench's addresses and directories, and none of the bench's
// PADDOCK_* variables.
func TestShippedServerArgs(t *testing.T) {
	o := bench.Options{Runsc: "/r/runsc", Agent: "/b/agent", Cache: "/c", Snapshots: "/s"}
	got := serverConfig{name: "steady", shipped: true, pool: 3, templates: []string{"python"}}.args(o, "127.0.0.1:9", "/state")
	want := []string{"serve", "--listen=127.0.0.1:9", "--cache-dir=/c", "--state-dir=/state", "--runsc=/r/runsc", "--agent=/b/agent", "--snapshot-dir=/s"}
	if !slices.Equal(got, want) {
		t.Errorf("args = %q\nwant %q", got, want)
	}
	env := withoutPaddockEnv([]string{"PATH=/bin", "PADDOCK_TEMPLATES=python", "HOME=/root", "PADDOCK_LOG_LEVEL=warn"})
	if !slices.Equal(env, []string{"PATH=/bin", "HOME=/root"}) {
		t.Errorf("env = %q", env)
	}
}

func TestSteadyThroughput(t *testing.T) {
	points := steadyFixture()
	points = append(points, steadyPoint{Template: "python-slim", Language: "python", Target: targetPaddock, Clients: 2})
	got := steadyThroughput(points, 2)
	if len(got) != 2 || got[0].Target != targetPaddock || got[1].Target != targetRaw || got[0].Runs != 240 {
		t.Errorf("throughput = %+v", got)
	}
}

func TestSameRawLimits(t *testing.T) {
	ts := []steadyTemplate{{name: "python", limits: `{"memory_mb":512}`}, {name: "python-slim", limits: `{"memory_mb":512}`},
		{name: "big", limits: `{"memory_mb":1024}`}, {name: "unlisted"}}
	for _, tc := range []struct {
		a, b string
		want bool
	}{{"python", "python-slim", true}, {"python", "big", false}, {"unlisted", "unlisted", false}, {"python", "gone", false}} {
		if got := sameRawLimits(ts, tc.a, tc.b); got != tc.want {
			t.Errorf("sameRawLimits(%s, %s) = %v", tc.a, tc.b, got)
		}
	}
}
