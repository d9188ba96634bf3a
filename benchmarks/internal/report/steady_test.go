package report

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strings"
	"testing"
	"time"
)

// steadyFixture is python at 1, 2 and 16 clients on Paddock and raw.
func steadyFixture() []SteadyPoint {
	ms := func(v ...int) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	pt := func(target string, clients, runs int, secs float64, cpu CPUUsage, lat []time.Duration) SteadyPoint {
		return SteadyPoint{Template: "python", Language: "python", Target: target, Clients: clients, CPU: cpu,
			LoadBefore: "1.00 2.00 3.00", LoadAfter: "1.50 2.00 3.00",
			T: Throughput{Lang: "python", Target: target, Concurrency: clients, Runs: runs, Elapsed: time.Duration(secs * float64(time.Second)),
				Latencies: lat, BusyByStatus: map[int]int{503: clients - 1}}}
	}
	return []SteadyPoint{
		pt(TargetPaddock, 1, 120, 60, CPUUsage{Machine: 30, Bench: 6, Server: 6, Sandboxes: 18}, ms(100, 200, 300)),
		pt(TargetRaw, 1, 60, 60, CPUUsage{Machine: 40, Bench: 1, Children: 39}, ms(900, 1000, 1100)),
		pt(TargetPaddock, 2, 240, 60, CPUUsage{Machine: 60, Bench: 12}, ms(400, 500)),
		pt(TargetRaw, 2, 100, 60, CPUUsage{Machine: 60}, ms(1000)),
		pt(TargetPaddock, 16, 180, 60, CPUUsage{Machine: 90}, ms(5000)),
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
	pt := func(target string, runs int, cpu CPUUsage) SteadyPoint {
		return SteadyPoint{Template: "python-slim", Language: "python", Target: target, Clients: 16, CPU: cpu,
			T: Throughput{Lang: "python-slim", Target: target, Concurrency: 16, Runs: runs, Elapsed: 10 * time.Second,
				Latencies: []time.Duration{time.Second}}}
	}
	points := []SteadyPoint{
		pt(TargetEmpty, 50, CPUUsage{Machine: 20, Children: 19}),
		pt(TargetPaddock, 30, CPUUsage{Machine: 20}),
		pt(TargetRaw, 20, CPUUsage{Machine: 20, Children: 18}),
	}
	vs := steadyVerdicts(points)
	if len(vs) != 1 || vs[0].Empty == nil || vs[0].Ceiling != 2.5 || vs[0].RawRatio != 1.5 {
		t.Fatalf("verdicts = %+v", vs)
	}
	if got := points[0].CPU.attributedPerRun(TargetEmpty, 50); got != 0.38 {
		t.Errorf("empty point's attributed CPU per run = %v, want the reaped runsc processes' 0.38", got)
	}
	var buf bytes.Buffer
	PrintSteady(&buf, points)
	for _, want := range []string{"python-slim    empty       16", "2.50×", "1.50×"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, buf.String())
		}
	}
	buf.Reset()
	if err := WriteSteadyCSV(&buf, points); err != nil {
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
	vs := steadyVerdicts([]SteadyPoint{{Template: "node", Target: TargetPaddock, Clients: 16, CPU: CPUUsage{Machine: 10}}})
	if len(vs) != 1 || vs[0].MeetsCPU || vs[0].AtPeak || vs[0].MeetsPeak {
		t.Errorf("verdicts = %+v", vs)
	}
}

func TestSteadyPercentiles(t *testing.T) {
	p := steadyFixture()[1]
	if got := p.P50(); got != time.Second {
		t.Errorf("p50 = %v, want 1s", got)
	}
	// Three samples do not support a p99: the maximum stands in.
	if label, d := p.P99(); label != "max" || d != 1100*time.Millisecond {
		t.Errorf("p99 = %s %v, want max 1.1s", label, d)
	}
	var many []time.Duration
	for i := 1; i <= 200; i++ {
		many = append(many, time.Duration(i)*time.Millisecond)
	}
	p.T.Latencies = many
	if label, d := p.P99(); label != "p99" || d != 198*time.Millisecond {
		t.Errorf("p99 = %s %v, want p99 198ms", label, d)
	}
}

func TestWriteSteadyCSV(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSteadyCSV(&buf, steadyFixture()); err != nil {
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
	PrintSteady(&buf, steadyFixture())
	out := buf.String()
	for _, want := range []string{"== steady state:", "2.00×", "2.40×", "0.75", "meets", "misses", "1.00 2.00 3.00", "0.300 s (max)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	buf.Reset()
	PrintSteady(&buf, nil)
	if buf.Len() != 0 {
		t.Errorf("no points printed %q", buf.String())
	}
}

func TestSteadyThroughput(t *testing.T) {
	points := steadyFixture()
	points = append(points, SteadyPoint{Template: "python-slim", Language: "python", Target: TargetPaddock, Clients: 2})
	got := SteadyThroughput(points, 2)
	if len(got) != 2 || got[0].Target != TargetPaddock || got[1].Target != TargetRaw || got[0].Runs != 240 {
		t.Errorf("throughput = %+v", got)
	}
}

func TestCPUPerRun(t *testing.T) {
	u := CPUUsage{Machine: 30, Bench: 2, Children: 12, Server: 4, Sandboxes: 16}
	if got := u.machinePerRun(40); got != 0.7 {
		t.Errorf("machine per run = %v, want 0.7", got)
	}
	if got := u.attributedPerRun(TargetPaddock, 40); got != 0.5 {
		t.Errorf("paddock attributed per run = %v, want 0.5", got)
	}
	if got := u.attributedPerRun(TargetRaw, 40); got != 0.3 {
		t.Errorf("raw attributed per run = %v, want 0.3", got)
	}
	if u.machinePerRun(0) != 0 || u.attributedPerRun(TargetRaw, 0) != 0 {
		t.Error("no runs: not 0")
	}
	if got := (CPUUsage{Machine: 1, Bench: 3}).machinePerRun(2); got != 0 {
		t.Errorf("bench above the machine: %v, want 0", got)
	}
}
