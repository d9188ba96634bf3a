package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestE2ETenantRunQueue: a tenant allowed one run in flight sends three
// at once. None is refused: the later two wait for the tenant's slot and
// run one after another, so the three programs' spans of time (each
// prints when it began and ended) do not overlap, and the runs that
// waited say so in queue_ms.
func TestE2ETenantRunQueue(t *testing.T) {
	e := newE2EWith(t, "--templates=python", "--tenant-max-runs=1", "--tenant-run-queue=4")
	type answer struct {
		Stdout string `json:"stdout"`
		Reason string `json:"reason"`
		Timing struct {
			QueueMS float64 `json:"queue_ms"`
		} `json:"timing"`
	}
	const code = "import time\nbegan = time.time()\ntime.sleep(0.3)\nprint(began, time.time())"
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		answers []answer
	)
	for range 3 {
		wg.Go(func() {
			status, raw := e.do(t, http.MethodPost, "/v1/run", map[string]any{"language": "python", "code": code}, "")
			var a answer
			if err := json.Unmarshal(raw, &a); status != http.StatusOK || err != nil || a.Reason != "ok" {
				t.Errorf("run: HTTP %d %s (%v), want 200 ok", status, raw, err)
				return
			}
			mu.Lock()
			answers = append(answers, a)
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(answers) != 3 {
		t.Fatalf("%d runs answered, want 3", len(answers))
	}
	type span struct{ from, to float64 }
	var spans []span
	waited := 0
	for _, a := range answers {
		f := strings.Fields(a.Stdout)
		if len(f) != 2 {
			t.Fatalf("stdout %q, want two times", a.Stdout)
		}
		from, err1 := strconv.ParseFloat(f[0], 64)
		to, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("stdout %q: %v %v", a.Stdout, err1, err2)
		}
		spans = append(spans, span{from, to})
		if a.Timing.QueueMS > 0 {
			waited++
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return int(a.from*1e6 - b.from*1e6) })
	for i := 1; i < len(spans); i++ {
		if spans[i].from < spans[i-1].to {
			t.Errorf("runs overlapped: %s", fmt.Sprint(spans))
		}
	}
	if waited < 2 {
		t.Errorf("%d runs report a queue wait, want at least the 2 that waited for the slot", waited)
	}
}
