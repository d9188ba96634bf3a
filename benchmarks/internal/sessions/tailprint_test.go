package sessions

import (
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
)

// ms makes n cells of d each, then three of last: enough, past 97,
// that last is the p99.
func ms(n int, d, last time.Duration) []time.Duration {
	out := make([]time.Duration, 0, n+3)
	for range n {
		out = append(out, d)
	}
	return append(out, last, last, last)
}

func TestP99Ratio(t *testing.T) {
	for _, tc := range []struct {
		name         string
		idle, loaded []time.Duration
		want         float64
	}{
		{"twice", ms(97, time.Millisecond, 3*time.Millisecond), ms(97, 2*time.Millisecond, 6*time.Millisecond), 2},
		{"same", ms(97, 2*time.Millisecond, 50*time.Millisecond), ms(97, 2*time.Millisecond, 50*time.Millisecond), 1},
		{"no idle cells", nil, ms(10, time.Millisecond, time.Millisecond), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := p99Ratio(tc.idle, tc.loaded); got != tc.want {
				t.Fatalf("p99Ratio = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRateRatio(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    oneShotRates
		want float64
	}{
		// 30 runs in 10 s and 10 in 10 s: 2/s without; 18 in 10 s: 1.8/s with.
		{"pooled over windows", oneShotRates{
			without: []report.Throughput{{Runs: 30, Elapsed: 10 * time.Second}, {Runs: 10, Elapsed: 10 * time.Second}},
			with:    []report.Throughput{{Runs: 18, Elapsed: 10 * time.Second}},
		}, 0.9},
		{"nothing without", oneShotRates{with: []report.Throughput{{Runs: 18, Elapsed: 10 * time.Second}}}, 0},
		{"nothing with", oneShotRates{without: []report.Throughput{{Runs: 5, Elapsed: time.Second}}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := rateRatio(tc.r); got != tc.want {
				t.Fatalf("rateRatio = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestBusyFirstSwapsEveryTurn(t *testing.T) {
	var got []bool
	for turn := range 4 {
		got = append(got, busyFirst(turn))
	}
	want := []bool{false, true, false, true}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("busyFirst over turns 0-3 = %v, want %v", got, want)
		}
	}
}

func TestRefusedIn(t *testing.T) {
	if got := refusedIn([]report.Throughput{{Busy: 3}, {Busy: 4}}); got != 7 {
		t.Fatalf("refusedIn = %d, want 7", got)
	}
}

func sampleResult() tailResult {
	return tailResult{
		binary: "after",
		idle:   ms(97, time.Millisecond, 4*time.Millisecond),
		loaded: []loadedCells{
			{clients: 1, cells: ms(97, time.Millisecond, 6*time.Millisecond), took: 2 * time.Second, oneShots: 8},
			{clients: 4, cells: ms(97, 2*time.Millisecond, 10*time.Millisecond), took: 4 * time.Second, oneShots: 10, refused: 3},
		},
		oneShots: []oneShotRates{{
			clients: 4,
			without: []report.Throughput{{Runs: 40, Elapsed: 10 * time.Second, Busy: 1, Starts: map[string]int{"pool": 40},
				Latencies: []time.Duration{200 * time.Millisecond, 300 * time.Millisecond, 400 * time.Millisecond}},
				{Runs: 20, Elapsed: 10 * time.Second, Starts: map[string]int{"pool": 18, "restore": 2}}},
			with: []report.Throughput{{Runs: 27, Elapsed: 10 * time.Second, Starts: map[string]int{"restore": 7, "pool": 20}},
				{Runs: 27, Elapsed: 10 * time.Second, Busy: 2, Starts: map[string]int{"pool": 27},
					Latencies: []time.Duration{900 * time.Millisecond}}},
			busyCells: 36,
			busyFor:   20 * time.Second,
		}},
	}
}

func TestSummary(t *testing.T) {
	want := "after: loaded p99 ÷ idle p99, 1 clients 1.5, 4 clients 2.5 (aim ≤ 2 at 4); one-shots/s with a busy session ÷ without, 4 clients 0.90 (aim ≥ 0.95)"
	if got := summary(sampleResult()); got != want {
		t.Fatalf("summary =\n%s\nwant\n%s", got, want)
	}
}

func TestPrintTail(t *testing.T) {
	o := bench.Options{TailN: 201, TailClients: []int{1, 4}, TailTurns: 2, TailWindow: 10 * time.Second}
	var b strings.Builder
	if err := printTail(&b, o, []tailResult{sampleResult()}, "1.00 2.00 3.00 1/100 42"); err != nil {
		t.Fatal(err)
	}
	// Columns are compared with single spaces between them.
	var lines []string
	for _, l := range strings.Split(b.String(), "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	out := strings.Join(lines, "\n")
	for _, want := range []string{
		"201 cells per condition: idle, then while each of [1 4] clients streams",
		"load average 1.00 2.00 3.00 1/100 42",
		// binary, clients, p50, p99, ratio, throttled, took, one-shots/s, refused
		"after 4 2.00 10.00 2.5 0/0 4.0 2.50 3 0, 0",
		"2 windows of 10s per condition in turns",
		// without pooled and per window, with pooled and per window, ratio, busy cells/s, refused
		"after 4 3.00 4.00, 2.00 2.70 2.70, 2.70 0.90 1.80 300 / 400 900 / 900 1, 2 pool 58 restore 2; pool 47 restore 7",
		"4 clients 0.90 (aim ≥ 0.95)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestReportOf(t *testing.T) {
	got := reportOf(sampleResult())
	if got.Binary != "after" || got.Idle != (report.TailCells{Clients: 0, N: 100, P50MS: 1, P99MS: 4}) {
		t.Fatalf("binary %q, idle %+v", got.Binary, got.Idle)
	}
	wantLoaded := []report.TailCells{{Clients: 1, N: 100, P50MS: 1, P99MS: 6}, {Clients: 4, N: 100, P50MS: 2, P99MS: 10}}
	if len(got.Loaded) != 2 || got.Loaded[0] != wantLoaded[0] || got.Loaded[1] != wantLoaded[1] {
		t.Fatalf("loaded %+v, want %+v", got.Loaded, wantLoaded)
	}
	if len(got.OneShots) != 1 || got.OneShots[0] != (report.TailRate{Clients: 4, WithoutRate: 3, WithRate: 2.7}) {
		t.Fatalf("one-shots %+v", got.OneShots)
	}
}
