package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// sessionSamples opens a session of l and times n executions of `x + 1`
// through HTTP, after `x = 1`.
func (s *server) sessionSamples(ctx context.Context, l lang, n int) ([]time.Duration, error) {
	var created struct {
		ID string `json:"id"`
	}
	if err := s.postJSON(ctx, "/v1/sessions", map[string]any{"language": l.name}, http.StatusCreated, &created); err != nil {
		return nil, err
	}
	defer func() {
		req, _ := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodDelete, s.base+"/v1/sessions/"+created.ID, nil)
		if resp, err := s.http.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	setup := map[string]string{"python": "x = 1", "node": "var x = 1"}[l.name]
	if err := s.postJSON(ctx, "/v1/sessions/"+created.ID+"/execute", map[string]any{"code": setup}, http.StatusOK, nil); err != nil {
		return nil, err
	}
	var out []time.Duration
	for range n {
		var r struct {
			Status string `json:"status"`
		}
		start := time.Now()
		if err := s.postJSON(ctx, "/v1/sessions/"+created.ID+"/execute", map[string]any{"code": "x + 1"}, http.StatusOK, &r); err != nil {
			return nil, err
		}
		out = append(out, time.Since(start))
		if r.Status != "ok" {
			return nil, fmt.Errorf("x + 1 in %s: status %q", l.name, r.Status)
		}
	}
	return out, nil
}

func (s *server) postJSON(ctx context.Context, path string, body any, want int, into any) error {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
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
