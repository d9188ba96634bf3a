package gatewaybench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/server"
)

// awaitNodesUp polls the gateway's /readyz until it reports n nodes up,
// for at most a minute.
func awaitNodesUp(ctx context.Context, g *server.Server, n int) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	up := 0
	for {
		var err error
		if up, err = nodesUp(ctx, g); err == nil && up >= n {
			return nil
		}
		if err := bench.Sleep(ctx, 100*time.Millisecond); err != nil {
			return fmt.Errorf("waiting for the gateway to see %d nodes up (%d so far): %w", n, up, err)
		}
	}
}

// nodesUp counts the nodes up in the gateway's /readyz.
func nodesUp(ctx context.Context, g *server.Server) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.URL()+"/readyz", nil)
	if err != nil {
		return 0, err
	}
	resp, err := g.Client().Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var body struct {
		Nodes []struct {
			Up bool `json:"up"`
		} `json:"nodes"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, fmt.Errorf("the gateway's /readyz: %w", err)
	}
	up := 0
	for _, nd := range body.Nodes {
		if nd.Up {
			up++
		}
	}
	return up, nil
}

// awaitFull waits until every node's python pool is full, so that no
// refill left from the last measurement runs beside the next.
func awaitFull(ctx context.Context, nodes []*server.Server) error {
	for _, n := range nodes {
		if err := n.AwaitFull(ctx, "python"); err != nil {
			return err
		}
	}
	return nil
}
