package doors

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/langs"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
	"github.com/paddock-dev/paddock/benchmarks/internal/server"
)

// MCPPhase times MCP run_code round trips against POST /v1/run of the same
// program on one pooled server, alternating, each from a full pool: the
// MCP door's overhead on a warm one-shot run. The MCP session is opened
// once, before the timed calls, as a host keeps it open.
func MCPPhase(ctx context.Context, o bench.Options, rep *report.Report) (err error) {
	s, err := server.Start(ctx, o, server.Config{Name: "mcp", Templates: langs.Names(langs.All), Pool: o.Pool, Snapshots: true})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Finish(ctx, rep)) }()
	client := mcp.NewClient(&mcp.Implementation{Name: "paddock-bench", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.URL() + "/mcp", HTTPClient: s.Client()}, nil)
	if err != nil {
		return fmt.Errorf("opening an MCP session: %w", err)
	}
	defer cs.Close()
	for _, l := range langs.All {
		if l.Snapshotted {
			if err := s.AwaitRestoredPool(ctx, l, server.RestoreTimeout); err != nil {
				return err
			}
		}
		p := l.Probes[0]
		d := report.DoorRow{Door: "mcp", Op: "run_code " + p.Name, Lang: l.Name}
		// One unmeasured round each way: first-use costs on both sides.
		for i := -1; i < o.MCPN; i++ {
			if err := s.AwaitFull(ctx, l.Name); err != nil {
				return err
			}
			resp, v1, err := s.RunOnce(ctx, l.Name, p.Code)
			if err != nil {
				return err
			}
			if resp.Reason != "ok" || !p.OK(resp.Stdout) {
				return fmt.Errorf("%s %s on /v1: reason %q, stdout %q", l.Name, p.Name, resp.Reason, resp.Stdout)
			}
			if err := s.AwaitFull(ctx, l.Name); err != nil {
				return err
			}
			via, err := mcpRunOnce(ctx, cs, l.Name, p)
			if err != nil {
				return err
			}
			if i >= 0 {
				d.V1, d.Via = append(d.V1, v1), append(d.Via, via)
			}
		}
		rep.Doors = append(rep.Doors, d)
	}
	return mcpNoSessionRow(ctx, s, cs, 10*o.MCPN, rep)
}

// mcpNoSessionRow times an execute in a session that does not exist, on
// /v1 (404) and over MCP (an error result), alternating: both reach the
// core and come back at once, so the row is the door's own cost without
// a sandbox's variance.
func mcpNoSessionRow(ctx context.Context, s *server.Server, cs *mcp.ClientSession, n int, rep *report.Report) error {
	d := report.DoorRow{Door: "mcp", Op: "execute, no such session", Lang: "-", Bare: true}
	for i := -1; i < n; i++ {
		start := time.Now()
		err := s.PostJSON(ctx, "/v1/sessions/no-such-session/execute", map[string]any{"code": "1"}, http.StatusNotFound, nil)
		v1 := time.Since(start)
		if err != nil {
			return err
		}
		start = time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "execute", Arguments: map[string]any{"session_id": "no-such-session", "code": "1"}})
		via := time.Since(start)
		if err != nil {
			return fmt.Errorf("execute over MCP: %w", err)
		}
		if !res.IsError {
			return errors.New("execute in no session over MCP: not an error")
		}
		if i >= 0 {
			d.V1, d.Via = append(d.V1, v1), append(d.Via, via)
		}
	}
	rep.Doors = append(rep.Doors, d)
	return nil
}

// mcpRunOnce calls run_code and times the round trip until the result
// has arrived and been decoded.
func mcpRunOnce(ctx context.Context, cs *mcp.ClientSession, language string, p langs.Probe) (time.Duration, error) {
	start := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"language": language, "code": p.Code}})
	d := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("%s %s over MCP: %w", language, p.Name, err)
	}
	out, _ := res.StructuredContent.(map[string]any)
	if stdout, _ := out["stdout"].(string); res.IsError || !p.OK(stdout) {
		return 0, fmt.Errorf("%s %s over MCP: isError %v, structured %v", language, p.Name, res.IsError, res.StructuredContent)
	}
	return d, nil
}
