package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// The gateway phase (issue 30): one gateway over local nodes against one
// of those nodes reached directly, signed as a gateway signs, in one run.
const (
	// gatewayAddedAim is the aim for the gateway's added latency
	// per request at the p50, in ms.
	gatewayAddedAim = 1.0

	GatewayVia    = "through the gateway"
	GatewayDirect = "one node, direct (signed)"
)

// Gateway is what the gateway phase measured.
type Gateway struct {
	Nodes    int `json:"nodes"`
	PoolSize int `json:"pool_per_node"`
	HostCPUs int `json:"host_cpus"`
	// Cheap is the request timed for the added latency ("GET
	// /v1/templates"); Via and Direct are its round trips, taken in
	// turns, through the gateway and straight to one node.
	Cheap  string          `json:"cheap_request"`
	Via    []time.Duration `json:"via_gateway_ns"`
	Direct []time.Duration `json:"direct_ns"`
	// BurstCPU is the gateway process's CPU seconds (user + system) over
	// a burst of BurstRequests cheap requests through it from a few
	// clients at once, answered at BurstRate a second.
	BurstCPU      float64        `json:"gateway_cpu_s_burst"`
	BurstRequests int            `json:"burst_requests"`
	BurstClients  int            `json:"burst_clients"`
	BurstRate     float64        `json:"burst_requests_per_s"`
	Points        []GatewayPoint `json:"points"`
}

// GatewayPoint is one client count's print(1) one-shots through the
// gateway over every node and against one node alone, each the sum of
// its windows, taken in turns.
type GatewayPoint struct {
	Clients int        `json:"clients"`
	Via     Throughput `json:"via_gateway"`
	Direct  Throughput `json:"direct"`
	// ByNode counts the gateway's runs by the node that answered them
	// (its X-Paddock-Node).
	ByNode map[string]int `json:"via_gateway_by_node"`
	// ViaCPU is the gateway's CPU seconds during its windows.
	ViaCPU float64 `json:"gateway_cpu_s"`
}

// Added is the gateway's added latency of the cheap request at quantile
// q: its quantile through the gateway less the direct one.
func (g Gateway) Added(q float64) time.Duration {
	return stats.Percentile(g.Via, q) - stats.Percentile(g.Direct, q)
}

// CPUPerCheap is the gateway's CPU per cheap request forwarded; 0
// without any.
func (g Gateway) CPUPerCheap() time.Duration {
	if g.BurstRequests == 0 {
		return 0
	}
	return time.Duration(g.BurstCPU / float64(g.BurstRequests) * float64(time.Second))
}

// Ratio is p's runs/s through the gateway over the direct runs/s; false
// without both.
func (p GatewayPoint) Ratio() (float64, bool) {
	return stats.FloatRatio(p.Via.Rate(), p.Direct.Rate())
}

// PrintGateway writes the phase's tables: the cheap request both ways,
// then the runs at each client count, with the ceiling this machine puts
// on the scaling ratio.
func PrintGateway(w io.Writer, g Gateway) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\tpath\tn\tp50 ms\tp99 ms\t\n", g.Cheap)
	for _, r := range []struct {
		name string
		d    []time.Duration
	}{{GatewayDirect, g.Direct}, {GatewayVia, g.Via}} {
		fmt.Fprintf(tw, "\t%s\t%d\t%s\t%s\t\n", r.name, len(r.d), stats.FormatP50(r.d), stats.FormatUpper(r.d))
	}
	tw.Flush()
	fmt.Fprintf(w, "added by the gateway: p50 %.3f ms, p99 %.3f ms\n", stats.MS(g.Added(0.5)), stats.MS(g.Added(0.99)))
	if g.BurstRequests > 0 {
		fmt.Fprintf(w, "the gateway's CPU per request forwarded: %.1f µs (%.2f CPU s over %d requests from %d clients at %.0f/s; the nodes on the same CPUs)\n",
			float64(g.CPUPerCheap())/float64(time.Microsecond), g.BurstCPU, g.BurstRequests, g.BurstClients, g.BurstRate)
	}
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "print(1) one-shots\tclients\tpath\truns\truns/s\tp50 ms\tp99 ms\tbusy\tstarts\tby node\tgateway CPU/run ms\t")
	for _, p := range g.Points {
		for _, r := range []struct {
			name string
			t    Throughput
		}{{GatewayDirect, p.Direct}, {fmt.Sprintf("%s over %d nodes", GatewayVia, g.Nodes), p.Via}} {
			byNode, cpu := "-", "-"
			if r.name != GatewayDirect {
				byNode = countList(p.ByNode)
				if r.t.Runs > 0 {
					cpu = fmt.Sprintf("%.3f", p.ViaCPU/float64(r.t.Runs)*1000)
				}
			}
			fmt.Fprintf(tw, "\t%d\t%s\t%d\t%.2f\t%s\t%s\t%d\t%s\t%s\t%s\t\n", p.Clients, r.name, r.t.Runs, r.t.Rate(),
				stats.FormatP50(r.t.Latencies), stats.FormatUpper(r.t.Latencies), r.t.Busy, countList(r.t.Starts), byNode, cpu)
		}
		if v, ok := p.Ratio(); ok {
			fmt.Fprintf(tw, "\t%d\tscaling ratio (gateway ÷ one node)\t\t%.3f\t\t\t\t\t\t\t\n", p.Clients, v)
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "the %d nodes share this machine's %d CPUs, so the scaling ratio's ceiling here is about 1 (more nodes add no cores); "+
		"on %d machines it would be near %d\n", g.Nodes, g.HostCPUs, g.Nodes, g.Nodes)
}

// countList is "n1×3, n2×4", sorted by key; "-" when empty.
func countList(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s×%d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// gatewayHeadlines are the added latency at the p50 (the aim: at most
// 1 ms) and p99, and each client count's scaling ratio, bounded near 1
// on one machine.
func gatewayHeadlines(g Gateway) []headline {
	if len(g.Via) == 0 || len(g.Direct) == 0 {
		return nil
	}
	out := []headline{
		newHeadline(fmt.Sprintf("gateway added latency p50, %s (through - direct)", g.Cheap), stats.MS(g.Added(0.5)), "ms", true, gatewayAddedAim),
		untargeted(fmt.Sprintf("gateway added latency p99, %s (through - direct)", g.Cheap), stats.MS(g.Added(0.99)), "ms"),
	}
	if c := g.CPUPerCheap(); c > 0 {
		out = append(out, untargeted(fmt.Sprintf("gateway requests/s per CPU core, %s (from its CPU per request)", g.Cheap), float64(time.Second)/float64(c), "/s"))
	}
	for _, p := range g.Points {
		if v, ok := p.Ratio(); ok {
			out = append(out, untargeted(fmt.Sprintf("print(1) runs/s at %d clients, gateway over %d nodes / one node (ceiling ~1 on one %d-CPU machine)", p.Clients, g.Nodes, g.HostCPUs), v, "x"))
		}
	}
	return out
}
