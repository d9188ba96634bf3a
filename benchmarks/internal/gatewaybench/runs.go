package gatewaybench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"sync"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/load"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
	"github.com/paddock-dev/paddock/benchmarks/internal/server"
)

var runBody = []byte(`{"language":"python","code":"print(1)"}`)

// runs measures each client count: o.GatewayTurns windows of
// o.GatewayDuration through the gateway and as many straight to the
// first node, in turns whose order swaps each turn, every pool full
// before each window.
func runs(ctx context.Context, o bench.Options, t *tier, g *report.Gateway) error {
	for _, c := range o.GatewayClients {
		p := report.GatewayPoint{Clients: c, ByNode: map[string]int{}}
		for turn := range o.GatewayTurns {
			order := []bool{true, false} // through the gateway?
			if turn%2 == 1 {
				order = []bool{false, true}
			}
			for _, via := range order {
				if err := awaitFull(ctx, t.nodes); err != nil {
					return err
				}
				s := t.nodes[0]
				if via {
					s = t.gateway
				}
				before, err := processCPU(t.gateway.PID())
				if err != nil {
					return err
				}
				w, byNode, err := window(ctx, s, c, o.GatewayDuration)
				if err != nil {
					return fmt.Errorf("%d clients, %s: %w", c, s.Config().Name, err)
				}
				after, err := processCPU(t.gateway.PID())
				if err != nil {
					return err
				}
				if via {
					p.Via = merge(p.Via, w)
					p.ViaCPU += after - before
					for k, v := range byNode {
						p.ByNode[k] += v
					}
				} else {
					p.Direct = merge(p.Direct, w)
				}
			}
		}
		g.Points = append(g.Points, p)
		r, _ := p.Ratio()
		bench.Progress("  %d clients: %.2f runs/s through the gateway (%v), %.2f on one node: ratio %.2f",
			c, p.Via.Rate(), p.ByNode, p.Direct.Rate(), r)
	}
	return nil
}

// window keeps c clients running print(1) on s for d and counts the
// runs by the node that answered (none when s is a node).
func window(ctx context.Context, s *server.Server, c int, d time.Duration) (report.Throughput, map[string]int, error) {
	var mu sync.Mutex
	byNode := map[string]int{}
	t, err := load.Rate(ctx, c, d, func(ctx context.Context) (string, time.Duration, error) {
		start, node, d, err := runOnce(ctx, s)
		if err == nil && node != "" {
			mu.Lock()
			byNode[node]++
			mu.Unlock()
		}
		return start, d, err
	})
	return t, byNode, err
}

// runOnce posts print(1) to s and times it until the whole answer has
// come; it returns the start kind and the node that answered.
func runOnce(ctx context.Context, s *server.Server) (start, node string, d time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/v1/run", bytes.NewReader(runBody))
	if err != nil {
		return "", "", 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	begin := time.Now()
	resp, err := s.Client().Do(req)
	if err != nil {
		return "", "", 0, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	d = time.Since(begin)
	if err != nil {
		return "", "", d, err
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		return "", "", d, load.BusyError{Status: resp.StatusCode}
	}
	var a server.RunResponse
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &a) != nil {
		return "", "", d, fmt.Errorf("HTTP %d: %s", resp.StatusCode, b)
	}
	if a.Reason != "ok" || a.Stdout != "1\n" {
		return "", "", d, fmt.Errorf("print(1): reason %q, stdout %q", a.Reason, a.Stdout)
	}
	return a.StartKind(), resp.Header.Get("X-Paddock-Node"), d, nil
}

// merge is a and b's windows as one: runs, time and answers summed.
func merge(a, b report.Throughput) report.Throughput {
	out := a
	out.Concurrency = b.Concurrency
	out.Elapsed += b.Elapsed
	out.Runs += b.Runs
	out.Busy += b.Busy
	out.Errors += b.Errors
	out.Starved += b.Starved
	out.Latencies = append(append([]time.Duration(nil), a.Latencies...), b.Latencies...)
	out.Waited = append(append([]time.Duration(nil), a.Waited...), b.Waited...)
	out.Unanswered = append(append([]time.Duration(nil), a.Unanswered...), b.Unanswered...)
	out.Starts = sum(a.Starts, b.Starts)
	out.BusyByStatus = map[int]int{}
	for _, m := range []map[int]int{a.BusyByStatus, b.BusyByStatus} {
		for k, v := range m {
			out.BusyByStatus[k] += v
		}
	}
	return out
}

func sum(a, b map[string]int) map[string]int {
	out := maps.Clone(a)
	if out == nil {
		out = map[string]int{}
	}
	for k, v := range b {
		out[k] += v
	}
	return out
}
