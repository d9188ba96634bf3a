package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/langs"
	"github.com/paddock-dev/paddock/benchmarks/internal/load"
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// runResponse is the part of a POST /v1/run response the bench reads.
type runResponse struct {
	Stdout string       `json:"stdout"`
	Stderr string       `json:"stderr"`
	Reason string       `json:"reason"`
	Warm   bool         `json:"warm"`
	Start  string       `json:"start"`
	Timing stats.Timing `json:"timing"`
	// Template is the template the run ran on (empty from servers that
	// did not say).
	Template string `json:"template"`
}

// startKind is the response's start kind, read from warm when the server
// does not say.
func (r runResponse) startKind() string {
	switch {
	case r.Start != "":
		return r.Start
	case r.Warm:
		return "pool"
	default:
		return "cold"
	}
}

// runOnce posts code and times the round trip until the whole response
// has arrived.
func (s *server) runOnce(ctx context.Context, language, code string) (runResponse, time.Duration, error) {
	field := "language"
	if _, ok := langs.ByName(language); !ok {
		// A template that is not named after its language (python-slim)
		// is asked for by name; servers before templates could be named
		// know only languages.
		field = "template"
	}
	return s.runBody(ctx, language, map[string]string{field: language, "code": code})
}

// runBody is runOnce of a request body of its own; label names it in
// errors.
func (s *server) runBody(ctx context.Context, label string, fields map[string]string) (runResponse, time.Duration, error) {
	body, _ := json.Marshal(fields)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+"/v1/run", bytes.NewReader(body))
	if err != nil {
		return runResponse{}, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := s.http.Do(req)
	if err != nil {
		return runResponse{}, 0, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(start)
	if err != nil {
		return runResponse{}, 0, err
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		return runResponse{}, d, load.BusyError{Status: resp.StatusCode, RetryAfter: retryAfter(resp.Header.Get("Retry-After"))}
	}
	var r runResponse
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &r) != nil {
		return runResponse{}, 0, fmt.Errorf("%s run: HTTP %d: %s", label, resp.StatusCode, b)
	}
	return r, d, nil
}

// retryAfter reads a Retry-After given in seconds; 0 otherwise.
func retryAfter(v string) time.Duration {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0
	}
	return time.Duration(n) * time.Second
}

// oneShotRow times runs of p until n of them started the way mode says.
// For the warm pool it waits before each run until the pool is full, so
// the number is the latency of a warm run, not of refilling. Runs that
// started another way are kept but not counted; after 2n+2 attempts it
// gives up and returns what it has. settle is a pause between runs that
// lets the previous sandbox's teardown finish off the measured path.
func (s *server) oneShotRow(ctx context.Context, l langs.Lang, p langs.Probe, mode string, n int, settle time.Duration) (stats.Row, error) {
	want := map[string]string{stats.ModePool: "pool", stats.ModeRestore: "restore", stats.ModeCold: "cold", stats.ModeRuncPool: "pool", stats.ModeRuncCold: "cold"}[mode]
	r := stats.Row{Lang: l.Name, Probe: p.Name, Mode: mode}
	for attempt := 0; len(r.Counted()) < n && attempt < 2*n+2; attempt++ {
		if mode == stats.ModePool || mode == stats.ModeRuncPool {
			if err := s.awaitFull(ctx, l.Name); err != nil {
				return r, err
			}
		} else if err := bench.Sleep(ctx, settle); err != nil {
			return r, err
		}
		resp, d, err := s.runOnce(ctx, l.Name, p.Code)
		if err != nil {
			return r, err
		}
		if resp.Reason != "ok" || !p.OK(resp.Stdout) {
			return r, fmt.Errorf("%s %s (%s): reason %q, stdout %q, stderr %q", l.Name, p.Name, mode, resp.Reason, resp.Stdout, resp.Stderr)
		}
		kind := resp.startKind()
		t := resp.Timing
		r.Samples = append(r.Samples, stats.Sample{D: d, Start: kind, Counted: kind == want, Timing: &t})
		if kind != want {
			r.Mismatches++
		}
	}
	return r, nil
}

// awaitRestores runs p until a run is served by a restore, so that the
// measured runs do not race the server's first snapshot build. It fails
// when the snapshot failed or no run was restored within timeout.
func (s *server) awaitRestores(ctx context.Context, l langs.Lang, p langs.Probe, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	state, last := "", ""
	for time.Now().Before(deadline) {
		if m, err := s.poolMetrics(ctx); err == nil {
			if state = snapshotState(m, l.Name); state == "failed" {
				break
			}
		}
		resp, _, err := s.runOnce(ctx, l.Name, p.Code)
		if err != nil {
			return err
		}
		if last = resp.startKind(); last == "restore" {
			return nil
		}
		if err := bench.Sleep(ctx, 500*time.Millisecond); err != nil {
			return err
		}
	}
	return fmt.Errorf("no %s run was restored from a snapshot (snapshot state %q, last start %q)", l.Name, state, last)
}
