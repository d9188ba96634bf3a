package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/langs"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
	"github.com/paddock-dev/paddock/benchmarks/internal/server"
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// A new session's start: POST /v1/sessions, then the first execute of
// sessionStartCode, timed together, on two servers at once that differ
// only in --session-kernels: 0 (each session turns its pooled interpreter
// into a kernel when it is created) and 1 (the pool keeps one sandbox per
// template with its kernel already open). The two alternate in ABBA
// order, each from a full pool, so that the machine's load falls on both
// alike.
const (
	modeSessionOpen    = "session, kernel opened on create"
	modeSessionPremade = "session, kernel ready in the pool"
	probeSessionFirst  = "create → first result"
	sessionStartCode   = "1+1"
	// StartTitle is the phase's title, which --session-start-only keeps.
	StartTitle = "session start: create → first result, kernels opened on create against kernel-ready sandboxes"
)

// StartPhase measures a new session's start on both servers, o.SessionStartN
// samples per language and server, and adds the two rows per language to
// rep.
func StartPhase(ctx context.Context, o bench.Options, rep *report.Report) (err error) {
	names := []string{"python", "node"}
	cfg := func(name string, kernels int) server.Config {
		return server.Config{Name: name, Templates: names, Pool: server.PoolShipped, Snapshots: true,
			Extra: []string{fmt.Sprintf("--session-kernels=%d", kernels)}}
	}
	open, err := server.Start(ctx, o, cfg("sessions opening their kernel", 0))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, open.Finish(ctx, rep)) }()
	premade, err := server.Start(ctx, o, cfg("sessions on kernel-ready sandboxes", 1))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, premade.Finish(ctx, rep)) }()
	py, _ := langs.ByName("python")
	for _, s := range []*server.Server{open, premade} {
		if err := s.AwaitRestoredPool(ctx, py, server.RestoreTimeout); err != nil {
			return err
		}
	}
	for _, name := range names {
		before := stats.Row{Lang: name, Probe: probeSessionFirst, Mode: modeSessionOpen}
		after := stats.Row{Lang: name, Probe: probeSessionFirst, Mode: modeSessionPremade}
		for i := range 2 * (o.SessionStartN + 1) {
			s, into, want := open, &before, "pool"
			if i%4 == 1 || i%4 == 2 {
				s, into, want = premade, &after, "kernel"
			}
			if err := awaitSessionPool(ctx, s, name); err != nil {
				return err
			}
			d, start, err := sessionFirstResult(ctx, s, name)
			if err != nil {
				return err
			}
			counted := i >= 2 && start == want
			if i >= 2 && !counted {
				into.Mismatches++
			}
			into.Samples = append(into.Samples, stats.Sample{D: d, Start: start, Counted: counted})
		}
		rep.Rows = append(rep.Rows, before, after)
		bench.Progress("  %s: create → first result p50 %s → %s, p99 %s → %s", name,
			before.P50().Round(100*time.Microsecond), after.P50().Round(100*time.Microsecond),
			stats.Percentile(before.Counted(), 0.99).Round(100*time.Microsecond), stats.Percentile(after.Counted(), 0.99).Round(100*time.Microsecond))
	}
	return nil
}

// sessionFirstResult times POST /v1/sessions then the first execute; the
// delete after is not timed. start is how the session's sandbox was made.
func sessionFirstResult(ctx context.Context, s *server.Server, name string) (time.Duration, string, error) {
	begin := time.Now()
	var created struct {
		ID    string `json:"id"`
		Start string `json:"start"`
	}
	if err := s.PostJSON(ctx, "/v1/sessions", map[string]any{"language": name}, http.StatusCreated, &created); err != nil {
		return 0, "", err
	}
	defer func() {
		req, _ := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodDelete, s.URL()+"/v1/sessions/"+created.ID, nil)
		if resp, err := s.Client().Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	var res struct {
		Status  string `json:"status"`
		Results []struct {
			Data map[string]any `json:"data"`
		} `json:"results"`
	}
	if err := s.PostJSON(ctx, "/v1/sessions/"+created.ID+"/execute", map[string]any{"code": sessionStartCode}, http.StatusOK, &res); err != nil {
		return 0, "", err
	}
	d := time.Since(begin)
	if res.Status != "ok" || len(res.Results) == 0 || res.Results[0].Data["text/plain"] != "2" {
		return 0, "", fmt.Errorf("%s session: %s gave %+v, want 2", name, sessionStartCode, res)
	}
	return d, created.Start, nil
}

// awaitSessionPool waits until the template's ready list is at its
// target and its kernel-ready sandboxes are all there.
func awaitSessionPool(ctx context.Context, s *server.Server, name string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL()+"/v1/templates", nil)
		if err != nil {
			return err
		}
		resp, err := s.Client().Do(req)
		if err != nil {
			return err
		}
		var list struct {
			Templates []struct {
				Name string `json:"name"`
				Pool struct {
					Target       int `json:"target"`
					Ready        int `json:"ready"`
					Kernels      int `json:"kernels"`
					KernelsReady int `json:"kernels_ready"`
				} `json:"pool"`
			} `json:"templates"`
		}
		err = json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("GET /v1/templates: %w", err)
		}
		for _, t := range list.Templates {
			if p := t.Pool; t.Name == name && p.Ready > 0 && p.Ready >= p.Target && p.KernelsReady >= p.Kernels {
				return nil
			}
		}
		if err := bench.Sleep(ctx, 20*time.Millisecond); err != nil {
			return fmt.Errorf("waiting for the %s pool and its kernels: %w", name, err)
		}
	}
}
