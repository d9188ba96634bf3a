package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestE2ETenantRunQueue: a tenant allowed one run in flight holds it with
// a long run, and sends two more. Neither is refused: both wait for the
// tenant's slot (seen in paddock_tenant_runs_waiting), and once the long
// run ends (its client goes away, which ends it at once) they run one
// after the other, so their programs' spans of time do not overlap, and
// each reports at least the wait the test imposed in its queue_ms.
func TestE2ETenantRunQueue(t *testing.T) {
	e := newE2EWith(t, "--templates=python", "--tenant-max-runs=1", "--tenant-run-queue=4")
	type answer struct {
		status int
		raw    []byte
		err    error
	}
	post := func(ctx context.Context, body map[string]any) answer {
		b, _ := json.Marshal(body)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.srv.URL+"/v1/run", bytes.NewReader(b))
		if err != nil {
			return answer{err: err}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return answer{err: err}
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		return answer{status: resp.StatusCode, raw: raw, err: err}
	}
	waiting := func() string {
		for _, l := range strings.Split(e.metrics(t), "\n") {
			if v, ok := strings.CutPrefix(l, "paddock_tenant_runs_waiting "); ok {
				return v
			}
		}
		return "absent"
	}
	// A safety net only: every wait below is for an event.
	until := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(2 * time.Minute); !cond(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("waited 2 minutes for %s (paddock_tenant_runs_waiting %s)", what, waiting())
			}
		}
	}

	long, cancelLong := context.WithCancel(t.Context())
	longDone := make(chan answer, 1)
	go func() {
		longDone <- post(long, map[string]any{"language": "python", "code": "import time\nprint('holding', flush=True)\ntime.sleep(600)", "timeout_ms": 30000})
	}()
	until("the long run to hold the slot", func() bool { return statsOf(e, "python").InUse > 0 })

	const code = "import time\nbegan = time.time()\ntime.sleep(0.3)\nprint(began, time.time())"
	queued := make(chan answer, 2)
	for range 2 {
		go func() { queued <- post(t.Context(), map[string]any{"language": "python", "code": code}) }()
	}
	until("two runs waiting for the slot", func() bool { return waiting() == "2" })
	const imposed = 200 * time.Millisecond
	time.Sleep(imposed) // a wait the queued runs must report, not a speed
	cancelLong()
	if a := <-longDone; !errors.Is(a.err, context.Canceled) {
		t.Errorf("the long run: %d %s %v, want its request cancelled", a.status, a.raw, a.err)
	}

	type span struct{ from, to float64 }
	var spans []span
	for range 2 {
		a := <-queued
		var r struct {
			Stdout, Reason string
			Timing         struct {
				QueueMS float64 `json:"queue_ms"`
			}
		}
		if a.err != nil || a.status != http.StatusOK || json.Unmarshal(a.raw, &r) != nil || r.Reason != "ok" {
			t.Fatalf("a queued run: %d %s %v, want 200 ok", a.status, a.raw, a.err)
		}
		if r.Timing.QueueMS < float64(imposed.Milliseconds()) {
			t.Errorf("a queued run reports queue_ms %.3f, want at least the %s it was held waiting", r.Timing.QueueMS, imposed)
		}
		f := strings.Fields(r.Stdout)
		if len(f) != 2 {
			t.Fatalf("stdout %q, want two times", r.Stdout)
		}
		from, err1 := strconv.ParseFloat(f[0], 64)
		to, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("stdout %q: %v %v", r.Stdout, err1, err2)
		}
		spans = append(spans, span{from, to})
	}
	slices.SortFunc(spans, func(a, b span) int { return int((a.from - b.from) * 1e6) })
	if spans[1].from < spans[0].to {
		t.Errorf("the queued runs overlapped: %s", fmt.Sprint(spans))
	}
	if w := waiting(); w != "0" {
		t.Errorf("paddock_tenant_runs_waiting %s at the end, want 0", w)
	}
}
