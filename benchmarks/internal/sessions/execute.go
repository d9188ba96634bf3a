package sessions

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/langs"
	"github.com/paddock-dev/paddock/benchmarks/internal/server"
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// ExecuteRow opens a session of l and times n executions of l.expr
// through HTTP, after l.setup. The session is deleted before it returns.
func ExecuteRow(ctx context.Context, s *server.Server, l langs.Lang, n int) (stats.Row, error) {
	r := stats.Row{Lang: l.Name, Probe: l.Expr, Mode: stats.ModeSession}
	var created struct {
		ID string `json:"id"`
	}
	if err := s.PostJSON(ctx, "/v1/sessions", map[string]any{"language": l.Name}, http.StatusCreated, &created); err != nil {
		return r, err
	}
	defer func() {
		req, _ := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodDelete, s.URL()+"/v1/sessions/"+created.ID, nil)
		if resp, err := s.Client().Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	if err := s.PostJSON(ctx, "/v1/sessions/"+created.ID+"/execute", map[string]any{"code": l.Setup}, http.StatusOK, nil); err != nil {
		return r, err
	}
	// The target is for an idle machine: the session's own create started
	// a refill, and the rows before may have left others running.
	if err := s.AwaitQuiet(ctx); err != nil {
		return r, err
	}
	for range n {
		var resp struct {
			Status string `json:"status"`
		}
		start := time.Now()
		if err := s.PostJSON(ctx, "/v1/sessions/"+created.ID+"/execute", map[string]any{"code": l.Expr}, http.StatusOK, &resp); err != nil {
			return r, err
		}
		r.Samples = append(r.Samples, stats.Sample{D: time.Since(start), Counted: true})
		if resp.Status != "ok" {
			return r, fmt.Errorf("%s in %s: status %q", l.Expr, l.Name, resp.Status)
		}
	}
	return r, nil
}
