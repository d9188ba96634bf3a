package hibernate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/server"
)

// info is the part of a session's description the phase reads: the
// answer to a create, a pause or a resume.
type info struct {
	ID         string  `json:"id"`
	State      string  `json:"state"`
	Start      string  `json:"start"`
	Count      int     `json:"execution_count"`
	ImageBytes int64   `json:"image_bytes"`
	Resumed    bool    `json:"resumed"`
	ResumeMS   float64 `json:"resume_ms"`
}

// cell is the part of an execute's answer the phase reads.
type cell struct {
	Status  string `json:"status"`
	Stdout  string `json:"stdout"`
	Count   int    `json:"execution_count"`
	Resumed bool   `json:"resumed"`
	Results []struct {
		Data map[string]any `json:"data"`
	} `json:"results"`
	Timing struct {
		ResumeMS float64 `json:"resume_ms"`
	} `json:"timing"`
}

// text is the cell's main result as text/plain ("" without one).
func (c cell) text() string {
	for _, r := range c.Results {
		if s, ok := r.Data["text/plain"].(string); ok {
			return s
		}
	}
	return ""
}

// apiError is an answer other than the one wanted: its status and body.
type apiError struct {
	status int
	body   string
}

func (e apiError) Error() string { return fmt.Sprintf("HTTP %d: %.300s", e.status, e.body) }

// post sends body as JSON to path and times the round trip until the
// whole answer has arrived; an answer other than want is an apiError.
func post(ctx context.Context, s *server.Server, path string, body any, want int, into any) (time.Duration, error) {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+path, bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	begin := time.Now()
	resp, err := s.Client().Do(req)
	if err != nil {
		return 0, err
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(begin)
	if err != nil {
		return d, err
	}
	if resp.StatusCode != want {
		return d, fmt.Errorf("POST %s: %w", path, apiError{resp.StatusCode, string(raw)})
	}
	if into != nil {
		if err := json.Unmarshal(raw, into); err != nil {
			return d, fmt.Errorf("POST %s: %w in %.300s", path, err, raw)
		}
	}
	return d, nil
}

// create opens a session of template.
func create(ctx context.Context, s *server.Server, template string) (info, time.Duration, error) {
	var in info
	d, err := post(ctx, s, "/v1/sessions", map[string]any{"template": template}, http.StatusCreated, &in)
	return in, d, err
}

// action posts a session action (pause, resume) and reads the answer.
func action(ctx context.Context, s *server.Server, id, name string) (info, time.Duration, error) {
	var in info
	d, err := post(ctx, s, "/v1/sessions/"+id+"/"+name, map[string]any{}, http.StatusOK, &in)
	return in, d, err
}

// execute runs one cell; a cell whose status is not ok is an error.
func execute(ctx context.Context, s *server.Server, id, code string) (cell, time.Duration, error) {
	var c cell
	d, err := post(ctx, s, "/v1/sessions/"+id+"/execute", map[string]any{"code": code}, http.StatusOK, &c)
	if err == nil && c.Status != "ok" {
		err = fmt.Errorf("session %s: %q answered status %q, stdout %q", id, code, c.Status, c.Stdout)
	}
	return c, d, err
}

// remove deletes a session, whatever the caller's context says.
func remove(ctx context.Context, s *server.Server, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, s.URL()+"/v1/sessions/"+id, nil)
	if err != nil {
		return
	}
	if resp, err := s.Client().Do(req); err == nil {
		resp.Body.Close()
	}
}
