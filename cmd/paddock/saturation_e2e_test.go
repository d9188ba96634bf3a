package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestE2ESaturation offers far more load than the server can serve: 64
// clients of one tenant, each sending runs back to back, against at most
// 4 runs at once of at least a second each (the program sleeps), so that
// most requests cannot get a sandbox within the 2 s queue deadline. The
// tenant may have 8 runs in flight and 16 more waiting for them, so some
// requests are refused at once (429), some wait for the tenant's slot
// and some for the pool's, under one deadline. Every answer must be a
// result, or a 429 or 503 with Retry-After, and must come within the
// queue deadline plus the run's own time (from its own timing) plus a
// margin; no request hangs and no other status appears.
func TestE2ESaturation(t *testing.T) {
	const (
		deadline = 2 * time.Second
		// margin covers HTTP, JSON and scheduling on a loaded machine; it
		// is a safety net, not a speed. Without the deadline the last of
		// 64 clients would wait at least 16 one-second runs.
		margin             = 10 * time.Second
		clients, perClient = 64, 3
	)
	e := newE2EWith(t, "--templates=python", "--queue-deadline="+deadline.String(), "--max-runs=4",
		"--tenant-max-runs=8", "--tenant-run-queue=16", "--start-budget=2")
	type timing struct {
		QueueMS float64 `json:"queue_ms"`
		TotalMS float64 `json:"total_ms"`
	}
	type answer struct {
		Stdout string `json:"stdout"`
		Reason string `json:"reason"`
		Code   string `json:"code"`
		Timing timing `json:"timing"`
	}
	// The client's timeout only turns a hang into a failure.
	client := &http.Client{Timeout: 5 * time.Minute}
	var (
		mu       sync.Mutex
		statuses = map[int]int{}
		problems []string
	)
	problem := func(format string, args ...any) {
		mu.Lock()
		problems = append(problems, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for range perClient {
				begin := time.Now()
				resp, err := client.Post(e.srv.URL+"/v1/run", "application/json",
					strings.NewReader(`{"language":"python","code":"import time\ntime.sleep(1)\nprint(1)"}`))
				if err != nil {
					problem("request failed (a hang?): %v", err)
					return
				}
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				took := time.Since(begin)
				mu.Lock()
				statuses[resp.StatusCode]++
				mu.Unlock()
				var a answer
				if err := json.Unmarshal(raw, &a); err != nil {
					problem("HTTP %d: body %q: %v", resp.StatusCode, raw, err)
					continue
				}
				switch resp.StatusCode {
				case http.StatusOK:
					if a.Reason != "ok" || a.Stdout != "1\n" {
						problem("200 %s", raw)
					}
					// The run's own time: everything after it was admitted.
					own := time.Duration((a.Timing.TotalMS - a.Timing.QueueMS) * float64(time.Millisecond))
					if limit := deadline + own + margin; took > limit {
						problem("200 after %v, over the queue deadline %v + its own %v + a margin of %v", took, deadline, own, margin)
					}
				case http.StatusTooManyRequests, http.StatusServiceUnavailable:
					if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || s < 1 {
						problem("%d %s without a Retry-After of whole seconds (%q)", resp.StatusCode, raw, resp.Header.Get("Retry-After"))
					}
					if resp.StatusCode == http.StatusServiceUnavailable && a.Code != "saturated" {
						problem("503 %s, want code saturated", raw)
					}
					if limit := deadline + margin; took > limit {
						problem("%d after %v, over the queue deadline %v + a margin of %v", resp.StatusCode, took, deadline, margin)
					}
					time.Sleep(20 * time.Millisecond)
				default:
					problem("HTTP %d %s", resp.StatusCode, raw)
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%d requests: statuses %v", clients*perClient, statuses)
	for _, p := range problems {
		t.Error(p)
	}
	// Far above capacity, every kind of answer must have been seen.
	if statuses[http.StatusOK] == 0 || statuses[http.StatusServiceUnavailable] == 0 || statuses[http.StatusTooManyRequests] == 0 {
		t.Errorf("statuses %v: want 200s, 429s and 503s", statuses)
	}
	e.healthy(t)
}
