package doors

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/langs"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
	"github.com/paddock-dev/paddock/benchmarks/internal/server"
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// e2bCode is the cell both sides run.
const e2bCode = "print(1)"

// E2BPhase measures n samples of each, the two kinds alternating in
// ABBA order (so that a drift in the machine's load falls on both alike)
// and the pool refilled before each, plus one unmeasured round of each
// first.
func E2BPhase(ctx context.Context, o bench.Options, rep *report.Report) (err error) {
	s, err := server.Start(ctx, o, server.Config{Name: "doors", Templates: []string{"python"}, Pool: o.Pool, Snapshots: true})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Finish(ctx, rep)) }()
	py, _ := langs.ByName("python")
	if err := s.AwaitRestoredPool(ctx, py, server.RestoreTimeout); err != nil {
		return err
	}
	e2b := stats.Row{Lang: "python", Probe: stats.ProbeE2BFirst, Mode: stats.ModeE2B}
	rest := stats.Row{Lang: "python", Probe: stats.ProbeE2BFirst, Mode: stats.ModeREST}
	defer func() { rep.Rows = append(rep.Rows, e2b, rest) }()
	for i := range 2 * (o.E2BN + 1) {
		if err := s.AwaitFull(ctx, "python"); err != nil {
			return err
		}
		measure, into := func() (time.Duration, error) { return e2bFirstResult(ctx, s) }, &e2b
		if i%4 == 1 || i%4 == 2 {
			measure, into = func() (time.Duration, error) { return restFirstResult(ctx, s) }, &rest
		}
		d, err := measure()
		if err != nil {
			return err
		}
		into.Samples = append(into.Samples, stats.Sample{D: d, Counted: i >= 2})
	}
	return nil
}

// e2bFirstResult times POST /v2/sandboxes then POST /execute (NDJSON, to
// its end_of_execution line), as the E2B SDK sends them; the kill after
// is not timed.
func e2bFirstResult(ctx context.Context, s *server.Server) (time.Duration, error) {
	start := time.Now()
	var sb struct {
		SandboxID          string `json:"sandboxID"`
		TrafficAccessToken string `json:"trafficAccessToken"`
	}
	if err := e2bJSON(ctx, s, "/v2/sandboxes", nil, map[string]any{"templateID": "code-interpreter-v1", "timeout": 300}, http.StatusCreated, &sb); err != nil {
		return 0, err
	}
	defer e2bDelete(ctx, s, sb.SandboxID)
	b, _ := json.Marshal(map[string]string{"code": e2bCode})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/execute", bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("E2b-Sandbox-Id", sb.SandboxID)
	req.Header.Set("E2b-Sandbox-Port", "49999")
	req.Header.Set("E2B-Traffic-Access-Token", sb.TrafficAccessToken)
	resp, err := s.Client().Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("POST /execute: HTTP %d", resp.StatusCode)
	}
	out := ""
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var line struct{ Type, Text string }
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return 0, fmt.Errorf("POST /execute: line %q: %w", sc.Bytes(), err)
		}
		switch line.Type {
		case "stdout":
			out += line.Text
		case "error":
			return 0, fmt.Errorf("POST /execute: %s", sc.Bytes())
		case "end_of_execution":
			d := time.Since(start)
			if out != "1\n" {
				return 0, fmt.Errorf("POST /execute: stdout %q, want \"1\\n\"", out)
			}
			return d, nil
		}
	}
	return 0, fmt.Errorf("POST /execute: stream ended without end_of_execution: %v", sc.Err())
}

// restFirstResult times POST /v1/sessions then one execute; the delete
// after is not timed.
func restFirstResult(ctx context.Context, s *server.Server) (time.Duration, error) {
	start := time.Now()
	var created struct {
		ID string `json:"id"`
	}
	if err := s.PostJSON(ctx, "/v1/sessions", map[string]any{"language": "python"}, http.StatusCreated, &created); err != nil {
		return 0, err
	}
	defer func() {
		req, _ := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodDelete, s.URL()+"/v1/sessions/"+created.ID, nil)
		if resp, err := s.Client().Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	var res struct{ Stdout string }
	if err := s.PostJSON(ctx, "/v1/sessions/"+created.ID+"/execute", map[string]any{"code": e2bCode}, http.StatusOK, &res); err != nil {
		return 0, err
	}
	d := time.Since(start)
	if res.Stdout != "1\n" {
		return 0, fmt.Errorf("/v1 execute: stdout %q, want \"1\\n\"", res.Stdout)
	}
	return d, nil
}

func e2bJSON(ctx context.Context, s *server.Server, path string, headers map[string]string, body any, want int, into any) error {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-KEY", "bench")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var raw bytes.Buffer
	_, _ = raw.ReadFrom(resp.Body)
	if resp.StatusCode != want {
		return fmt.Errorf("POST %s: HTTP %d: %s", path, resp.StatusCode, raw.Bytes())
	}
	return json.Unmarshal(raw.Bytes(), into)
}

func e2bDelete(ctx context.Context, s *server.Server, id string) {
	req, _ := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodDelete, s.URL()+"/sandboxes/"+id, nil)
	req.Header.Set("X-API-KEY", "bench")
	if resp, err := s.Client().Do(req); err == nil {
		resp.Body.Close()
	}
}
