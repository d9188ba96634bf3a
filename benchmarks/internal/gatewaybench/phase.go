package gatewaybench

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
	"github.com/paddock-dev/paddock/benchmarks/internal/server"
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// Title is the phase's title, which --gateway-only keeps.
const Title = "gateway: one gateway over three local nodes against one node alone (added latency, one-shot throughput)"

// Phase starts the tier, times the cheap request both ways and the
// gateway's CPU per request, then the one-shots at each client count.
func Phase(ctx context.Context, o bench.Options, rep *report.Report) (err error) {
	if !server.ServeHas(o.Paddock, "role") {
		return fmt.Errorf("%s serve has no --role (rebuild it with `make build`)", o.Paddock)
	}
	if o.GatewayPool < 1 {
		return fmt.Errorf("--gateway-pool %d: want at least 1", o.GatewayPool)
	}
	t, err := startTier(ctx, o)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, t.stop(ctx, rep)) }()
	g := &report.Gateway{Nodes: len(t.nodes), PoolSize: o.GatewayPool, HostCPUs: runtime.NumCPU(), Cheap: "GET " + cheapPath}
	rep.Gateway = g
	if err := awaitFull(ctx, t.nodes); err != nil {
		return err
	}
	if err := cheap(ctx, o.GatewayN, t.gateway, t.nodes[0], g); err != nil {
		return err
	}
	bench.Progress("  %s p50: through the gateway %.3f ms, direct %.3f ms", g.Cheap, stats.MS(stats.Percentile(g.Via, 0.5)), stats.MS(stats.Percentile(g.Direct, 0.5)))
	if err := cheapCPU(ctx, t.gateway, g); err != nil {
		return err
	}
	if o.GatewayDuration <= 0 || o.GatewayTurns <= 0 {
		return nil
	}
	return runs(ctx, o, t, g)
}
