package report

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func ms(v ...float64) []time.Duration {
	var out []time.Duration
	for _, x := range v {
		out = append(out, time.Duration(x*float64(time.Millisecond)))
	}
	return out
}

func TestGatewayAddedAndRatio(t *testing.T) {
	g := Gateway{Nodes: 3, HostCPUs: 2, Cheap: "GET /v1/templates",
		Via:      ms(0.5, 0.4, 0.6, 0.45, 2.0),
		Direct:   ms(0.2, 0.25, 0.3, 0.22, 1.0),
		BurstCPU: 0.25, BurstRequests: 2500, BurstClients: 4, BurstRate: 900,
		Points: []GatewayPoint{{Clients: 4,
			Via:    Throughput{Runs: 90, Elapsed: 10 * time.Second, Latencies: ms(400, 450)},
			Direct: Throughput{Runs: 60, Elapsed: 10 * time.Second, Latencies: ms(600, 650)},
			ByNode: map[string]int{"n2": 30, "n1": 31, "n3": 29}, ViaCPU: 0.09}}}
	if got, want := g.Added(0.5), 250*time.Microsecond; got != want {
		t.Errorf("Added(0.5) = %v, want %v", got, want)
	}
	if got, want := g.Added(1), time.Second/1000; got != want {
		t.Errorf("Added(1) = %v, want %v", got, want)
	}
	if got, want := g.CPUPerCheap(), 100*time.Microsecond; got != want {
		t.Errorf("CPUPerCheap() = %v, want %v", got, want)
	}
	if v, ok := g.Points[0].Ratio(); !ok || v != 1.5 {
		t.Errorf("Ratio() = %v, %v, want 1.5", v, ok)
	}
	hs := gatewayHeadlines(g)
	if len(hs) != 4 {
		t.Fatalf("%d headlines, want 4: %v", len(hs), hs)
	}
	if hs[0].Meets == nil || !*hs[0].Meets || hs[0].Value != 0.25 {
		t.Errorf("added p50 headline %+v, want 0.25 ms meeting the 1 ms aim", hs[0])
	}
	if hs[2].Value != 10000 {
		t.Errorf("requests/s per core %v, want 10000", hs[2].Value)
	}
	var buf bytes.Buffer
	PrintGateway(&buf, g)
	for _, want := range []string{"n1×31, n2×30, n3×29", "scaling ratio (gateway ÷ one node)", "1.500", "ceiling here is about 1", "100.0 µs", "1.000 ms"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("PrintGateway lacks %q:\n%s", want, buf.String())
		}
	}
}

// Without samples both ways there is nothing to compare: no headline.
func TestGatewayHeadlinesNeedBothPaths(t *testing.T) {
	if hs := gatewayHeadlines(Gateway{Via: ms(1)}); len(hs) != 0 {
		t.Errorf("headlines %v from one path", hs)
	}
}
