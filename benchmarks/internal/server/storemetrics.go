package server

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
)

// StoreMetrics returns the server's paddock_store_* samples from GET
// /metrics: what its history store wrote, dropped and still queues. A
// server without a history has none.
func (s *Server) StoreMetrics(ctx context.Context) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: HTTP %d", resp.StatusCode)
	}
	var out []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "paddock_store_") {
			out = append(out, line)
		}
	}
	return out, sc.Err()
}
