package main

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
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// e2bCode is the cell both sides run.
const e2bCode = "print(1)"

// e2bPhase measures n samples of each, the two kinds alternating in
// ABBA order (so that a drift in the machine's load falls on both alike)
// and the pool refilled before each, plus one unmeasured round of each
// first.
func e2bPhase(ctx context.Context, o bench.Options, rep *report.Report) (err error) {
	s, err := startServer(ctx, o, serverConfig{name: "doors", templates: []string{"python"}, pool: o.Pool, snapshots: true})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.finish(ctx, rep)) }()
	py, _ := langs.ByName("python")
	if err := s.awaitRestoredPool(ctx, py, restoreTimeout); err != nil {
		return err
	}
	e2b := stats.Row{Lang: "python", Probe: stats.ProbeE2BFirst, Mode: stats.ModeE2B}
	rest := stats.Row{Lang: "python", Probe: stats.ProbeE2BFirst, Mode: stats.ModeREST}
	defer func() { rep.Rows = append(rep.Rows, e2b, rest) }()
	for i := range 2 * (o.E2BN + 1) {
		if err := s.awaitFull(ctx, "python"); err != nil {
			return err
		}
		measure, into := s.e2bFirstResult, &e2b
		if i%4 == 1 || i%4 == 2 {
			measure, into = s.restFirstResult, &rest
		}
		d, err := measure(ctx)
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
func (s *server) e2bFirstResult(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	var sb struct {
		SandboxID          string `json:"sandboxID"`
		TrafficAccessToken string `json:"trafficAccessToken"`
	}
	if err := s.e2bJSON(ctx, "/v2/sandboxes", nil, map[string]any{"templateID": "code-interpreter-v1", "timeout": 300}, http.StatusCreated, &sb); err != nil {
		return 0, err
	}
	defer s.e2bDelete(ctx, sb.SandboxID)
	b, _ := json.Marshal(map[string]string{"code": e2bCode})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+"/execute", bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("E2b-Sandbox-Id", sb.SandboxID)
	req.Header.Set("E2b-Sandbox-Port", "49999")
	req.Header.Set("E2B-Traffic-Access-Token", sb.TrafficAccessToken)
	resp, err := s.http.Do(req)
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
func (s *server) restFirstResult(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	var created struct {
		ID string `json:"id"`
	}
	if err := s.postJSON(ctx, "/v1/sessions", map[string]any{"language": "python"}, http.StatusCreated, &created); err != nil {
		return 0, err
	}
	defer func() {
		req, _ := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodDelete, s.base+"/v1/sessions/"+created.ID, nil)
		if resp, err := s.http.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	var res struct{ Stdout string }
	if err := s.postJSON(ctx, "/v1/sessions/"+created.ID+"/execute", map[string]any{"code": e2bCode}, http.StatusOK, &res); err != nil {
		return 0, err
	}
	d := time.Since(start)
	if res.Stdout != "1\n" {
		return 0, fmt.Errorf("/v1 execute: stdout %q, want \"1\\n\"", res.Stdout)
	}
	return d, nil
}

func (s *server) e2bJSON(ctx context.Context, path string, headers map[string]string, body any, want int, into any) error {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-KEY", "bench")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := s.http.Do(req)
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

func (s *server) e2bDelete(ctx context.Context, id string) {
	req, _ := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodDelete, s.base+"/sandboxes/"+id, nil)
	req.Header.Set("X-API-KEY", "bench")
	if resp, err := s.http.Do(req); err == nil {
		resp.Body.Close()
	}
}
