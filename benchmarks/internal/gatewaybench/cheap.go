package gatewaybench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/host"
	"github.com/paddock-dev/paddock/benchmarks/internal/load"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
	"github.com/paddock-dev/paddock/benchmarks/internal/server"
)

// cheapPath is the request whose round trip the added latency is read
// from: answered by a node from memory, no sandbox involved.
const cheapPath = "/v1/templates"

// cheapWarmup are the unmeasured requests each way first: connections
// made, first-use costs paid.
const cheapWarmup = 20

// cheap times n GET /v1/templates through the gateway and n straight to
// the node, one of each per turn, the order swapped every turn.
func cheap(ctx context.Context, n int, gw, node *server.Server, g *report.Gateway) error {
	for range cheapWarmup {
		for _, s := range []*server.Server{gw, node} {
			if _, err := get(ctx, s); err != nil {
				return err
			}
		}
	}
	for i := range n {
		pair := []*server.Server{gw, node}
		if i%2 == 1 {
			pair[0], pair[1] = node, gw
		}
		for _, s := range pair {
			d, err := get(ctx, s)
			if err != nil {
				return err
			}
			if s == gw {
				g.Via = append(g.Via, d)
			} else {
				g.Direct = append(g.Direct, d)
			}
		}
	}
	return nil
}

// Clients and length of the burst the gateway's CPU per request is read
// over: long enough that /proc's 10 ms ticks are a few percent of it.
const (
	burstClients = 4
	burstTime    = 3 * time.Second
)

// cheapCPU sends GET /v1/templates through the gateway from
// burstClients clients for burstTime and keeps the gateway process's CPU
// seconds over it and the requests answered. Its checks of the nodes
// (every second) fall in the count too: the estimate errs high.
func cheapCPU(ctx context.Context, gw *server.Server, g *report.Gateway) error {
	before, err := processCPU(gw.PID())
	if err != nil {
		return err
	}
	t, err := load.Rate(ctx, burstClients, burstTime, func(ctx context.Context) (string, time.Duration, error) {
		d, err := get(ctx, gw)
		return "", d, err
	})
	if err != nil {
		return err
	}
	after, err := processCPU(gw.PID())
	if err != nil {
		return err
	}
	g.BurstCPU, g.BurstRequests, g.BurstClients, g.BurstRate = after-before, t.Runs, burstClients, t.Rate()
	return nil
}

// get times one GET of cheapPath on s until its whole answer has come.
func get(ctx context.Context, s *server.Server) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL()+cheapPath, nil)
	if err != nil {
		return 0, err
	}
	begin := time.Now()
	resp, err := s.Client().Do(req)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	d := time.Since(begin)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s GET %s: HTTP %d", s.Config().Name, cheapPath, resp.StatusCode)
	}
	return d, nil
}

// processCPU is pid's user + system CPU seconds so far.
func processCPU(pid int) (float64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	return host.ParsePidStatCPU(string(b))
}
