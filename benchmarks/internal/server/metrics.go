package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// PoolMetrics returns the server's paddock_pool_* samples from GET
// /metrics: its pool gauges and counters (hits, misses, restores, restore
// failures…), kept in the JSON report as evidence of how sandboxes were
// made.
func (s *Server) PoolMetrics(ctx context.Context) ([]string, error) {
	return s.metricsWithPrefix(ctx, "paddock_pool_")
}

// StoreMetrics returns the server's paddock_store_* samples from GET
// /metrics: what its history store wrote, dropped and still queues. A
// server without a history has none.
func (s *Server) StoreMetrics(ctx context.Context) ([]string, error) {
	return s.metricsWithPrefix(ctx, "paddock_store_")
}

// metricsWithPrefix returns the samples of GET /metrics whose names start
// with prefix.
func (s *Server) metricsWithPrefix(ctx context.Context, prefix string) ([]string, error) {
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
	return filterMetrics(resp.Body, prefix)
}

// filterPoolMetrics keeps the paddock_pool_* samples of a Prometheus text
// exposition.
func filterPoolMetrics(r io.Reader) ([]string, error) { return filterMetrics(r, "paddock_pool_") }

// filterMetrics keeps the samples of a Prometheus text exposition whose
// lines start with prefix.
func filterMetrics(r io.Reader, prefix string) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, prefix) {
			out = append(out, line)
		}
	}
	return out, sc.Err()
}

var snapshotStateLine = regexp.MustCompile(`^paddock_pool_snapshot_state\{(.*)\} 1$`)

// SnapshotState finds the current snapshot state of template in pool
// metrics samples, or "" when they don't say.
func SnapshotState(samples []string, template string) string {
	for _, line := range samples {
		m := snapshotStateLine.FindStringSubmatch(line)
		if m == nil || !strings.Contains(m[1], `template="`+template+`"`) {
			continue
		}
		for _, l := range strings.Split(m[1], ",") {
			if v, ok := strings.CutPrefix(l, `state="`); ok {
				return strings.TrimSuffix(v, `"`)
			}
		}
	}
	return ""
}

// counterValue finds the sample of metric for template in pool metrics
// samples.
func counterValue(samples []string, metric, template string) (float64, bool) {
	prefix := metric + `{template="` + template + `"} `
	for _, line := range samples {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f, err == nil
		}
	}
	return 0, false
}

// MadeCounts reads how many sandboxes of template s has made so far, by
// restore and by cold start.
func (s *Server) MadeCounts(ctx context.Context, template string) (map[string]int, error) {
	m, err := s.PoolMetrics(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for kind, metric := range map[string]string{"restore": "paddock_pool_restores_total", "cold": "paddock_pool_cold_starts_total"} {
		v, ok := counterValue(m, metric, template)
		if !ok {
			return nil, fmt.Errorf("GET /metrics: no %s for %s", metric, template)
		}
		out[kind] = int(v)
	}
	return out, nil
}
