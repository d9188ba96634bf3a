package server

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

	"github.com/paddock-dev/paddock/benchmarks/internal/langs"
	"github.com/paddock-dev/paddock/benchmarks/internal/load"
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// RunResponse is the part of a POST /v1/run response the bench reads.
type RunResponse struct {
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

// StartKind is the response's start kind, read from warm when the server
// does not say.
func (r RunResponse) StartKind() string {
	switch {
	case r.Start != "":
		return r.Start
	case r.Warm:
		return "pool"
	default:
		return "cold"
	}
}

// RunOnce posts code and times the round trip until the whole response
// has arrived.
func (s *Server) RunOnce(ctx context.Context, language, code string) (RunResponse, time.Duration, error) {
	field := "language"
	if _, ok := langs.ByName(language); !ok {
		// A template that is not named after its language (python-slim)
		// is asked for by name; servers before templates could be named
		// know only languages.
		field = "template"
	}
	return s.RunBody(ctx, language, map[string]string{field: language, "code": code})
}

// RunBody is RunOnce of a request body of its own; label names it in
// errors.
func (s *Server) RunBody(ctx context.Context, label string, fields map[string]string) (RunResponse, time.Duration, error) {
	body, _ := json.Marshal(fields)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+"/v1/run", bytes.NewReader(body))
	if err != nil {
		return RunResponse{}, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := s.http.Do(req)
	if err != nil {
		return RunResponse{}, 0, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(start)
	if err != nil {
		return RunResponse{}, 0, err
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		return RunResponse{}, d, load.BusyError{Status: resp.StatusCode, RetryAfter: retryAfter(resp.Header.Get("Retry-After"))}
	}
	var r RunResponse
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &r) != nil {
		return RunResponse{}, 0, fmt.Errorf("%s run: HTTP %d: %s", label, resp.StatusCode, b)
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

// PostJSON posts body as JSON to path, wants the status want and decodes
// the answer into into (nil: not decoded).
func (s *Server) PostJSON(ctx context.Context, path string, body any, want int, into any) error {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("POST %s: HTTP %d: %s", path, resp.StatusCode, raw)
	}
	if into != nil {
		return json.Unmarshal(raw, into)
	}
	return nil
}
