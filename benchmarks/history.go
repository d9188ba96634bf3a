package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/langs"
	"github.com/paddock-dev/paddock/benchmarks/internal/load"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
	"github.com/paddock-dev/paddock/benchmarks/internal/server"
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// historyTitle is the phase's title, which --history-only keeps.
const historyTitle = "history store on against off: warm print(1), closed-loop throughput"

// historyPhase runs two servers alike but for --history-db (the default
// SQLite file in the state directory, and off), both up at once: warm
// print(1)s in ABBA order from full pools, then a closed loop of
// o.HistoryClients clients in ABBA segments, then each server's store
// counters.
func historyPhase(ctx context.Context, o bench.Options, rep *report.Report) (err error) {
	if !server.ServeHas(o.Paddock, "history-db") {
		return fmt.Errorf("%s serve has no --history-db (rebuild it with `make build`)", o.Paddock)
	}
	cfg := func(name string, extra ...string) server.Config {
		return server.Config{Name: name, Templates: []string{"python"}, Pool: max(o.Pool, 1), Snapshots: true, Extra: extra}
	}
	on, err := server.Start(ctx, o, cfg("history on"))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, on.Finish(ctx, rep)) }()
	off, err := server.Start(ctx, o, cfg("history off", "--history-db=off"))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, off.Finish(ctx, rep)) }()
	py, _ := langs.ByName("python")
	servers := [2]*server.Server{on, off}
	for _, s := range servers {
		if err := s.AwaitRestoredPool(ctx, py, server.RestoreTimeout); err != nil {
			return err
		}
	}
	var sent [2]int
	rows := [2]stats.Row{
		{Lang: "python", Probe: report.HistoryProbe, Mode: report.ModeHistoryOn},
		{Lang: "python", Probe: report.HistoryProbe, Mode: report.ModeHistoryOff},
	}
	defer func() { rep.Rows = append(rep.Rows, rows[0], rows[1]) }()
	// One unmeasured run on each first, then N counted on each.
	for i := range 2 * (o.HistoryN + 1) {
		k := abba(i)
		if err := servers[k].AwaitFull(ctx, "python"); err != nil {
			return err
		}
		if err := slimSample(ctx, servers[k], &rows[k], "pool"); err != nil {
			return err
		}
		sent[k]++
		if i < 2 {
			rows[k].Samples[len(rows[k].Samples)-1].Counted = false
		}
	}
	bench.Progress("  warm print(1) p50 on %s, off %s", rows[0].P50().Round(100*time.Microsecond), rows[1].P50().Round(100*time.Microsecond))
	if o.HistoryDuration > 0 && o.HistoryClients > 0 {
		tps, n, err := historyLoops(ctx, o, servers)
		for k := range sent {
			sent[k] += n[k]
		}
		if err != nil {
			return err
		}
		rep.Throughput = append(rep.Throughput, tps[0], tps[1])
		bench.Progress("  %d clients: %.2f runs/s on, %.2f off", o.HistoryClients, tps[0].Rate(), tps[1].Rate())
	}
	if o.GraphQLN > 0 {
		warm, cold, err := graphqlLatency(ctx, on, o.GraphQLN)
		rep.Rows = append(rep.Rows, warm, cold)
		if err != nil {
			return err
		}
		bench.Progress("  graphql p50: cache warm %s, cold %s", warm.P50().Round(10*time.Microsecond), cold.P50().Round(10*time.Microsecond))
	}
	for k, s := range servers {
		m, err := historyStore(ctx, s, k == 0, sent[k])
		if err != nil {
			return err
		}
		rep.Store = append(rep.Store, m)
	}
	return nil
}

// abba is which server (0 or 1) the i-th sample goes to: 0 1 1 0 0 1 1 0…,
// so that a drift of the machine's load falls on both alike.
func abba(i int) int {
	if i%4 == 1 || i%4 == 2 {
		return 1
	}
	return 0
}

// historySegments is how many turns of the closed loop each server gets.
const historySegments = 2

// historyLoops runs the closed loop on each server in ABBA segments of
// o.HistoryDuration/historySegments, each from quiet pools on both, and
// merges each server's segments; n counts the answered runs per server.
func historyLoops(ctx context.Context, o bench.Options, servers [2]*server.Server) (tps [2]report.Throughput, n [2]int, err error) {
	targets := [2]string{report.TargetHistoryOn, report.TargetHistoryOff}
	var segs [2][]report.Throughput
	seg := o.HistoryDuration / historySegments
	for i := range 2 * historySegments {
		k := abba(i)
		for _, s := range servers {
			if err := s.AwaitQuiet(ctx); err != nil {
				return tps, n, err
			}
		}
		s := servers[k]
		t, err := load.Rate(ctx, o.HistoryClients, seg, func(ctx context.Context) (string, time.Duration, error) {
			resp, d, err := s.RunOnce(ctx, "python", report.HistoryProbe)
			if err != nil {
				return "", d, err
			}
			if resp.Reason != "ok" || resp.Stdout != "1\n" {
				return "", d, fmt.Errorf("python print(1): reason %q, stdout %q, stderr %q", resp.Reason, resp.Stdout, resp.Stderr)
			}
			return resp.StartKind(), d, nil
		})
		t.Lang, t.Target = "python", targets[k]
		segs[k] = append(segs[k], t)
		n[k] += t.Runs
		if err != nil {
			return tps, n, fmt.Errorf("%s closed loop: %w", targets[k], err)
		}
	}
	return [2]report.Throughput{report.MergeThroughput(segs[0]), report.MergeThroughput(segs[1])}, n, nil
}

// historyStore reads the server's store counters once its queue is
// empty (the store writes in batches, off the request path), waiting at
// most a minute.
func historyStore(ctx context.Context, s *server.Server, history bool, sent int) (report.StoreMetrics, error) {
	m := report.StoreMetrics{Server: s.Config().Name, History: history, Runs: sent}
	deadline := time.Now().Add(time.Minute)
	for {
		samples, err := s.StoreMetrics(ctx)
		if err != nil {
			return m, err
		}
		m.Samples = samples
		if report.SumMetric(samples, "paddock_store_queue_length") == 0 || time.Now().After(deadline) {
			return m, nil
		}
		if err := bench.Sleep(ctx, 200*time.Millisecond); err != nil {
			return m, err
		}
	}
}

// graphqlLatency times report.GraphQLProbe on s n times with its
// document cache warm (the same text each time, parsed once before) and
// n times cold (a comment makes each text new, so each is parsed and
// validated), alternating, over the runs the phase recorded.
func graphqlLatency(ctx context.Context, s *server.Server, n int) (warm, cold stats.Row, err error) {
	warm = stats.Row{Lang: "graphql", Probe: report.GraphQLProbe, Mode: report.ModeGraphQLWarm}
	cold = stats.Row{Lang: "graphql", Probe: report.GraphQLProbe, Mode: report.ModeGraphQLCold}
	if _, err := graphqlQuery(ctx, s, report.GraphQLProbe); err != nil {
		return warm, cold, err
	}
	for i := range 2 * n {
		row, query := &warm, report.GraphQLProbe
		if abba(i) == 1 {
			row, query = &cold, fmt.Sprintf("%s\n# %d", report.GraphQLProbe, i)
		}
		d, err := graphqlQuery(ctx, s, query)
		if err != nil {
			return warm, cold, err
		}
		row.Samples = append(row.Samples, stats.Sample{D: d, Counted: true})
	}
	return warm, cold, nil
}

// graphqlQuery POSTs one query and checks that it answered data and no
// errors.
func graphqlQuery(ctx context.Context, s *server.Server, query string) (time.Duration, error) {
	body, _ := json.Marshal(map[string]string{"query": query})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/v1/graphql", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := s.Client().Do(req)
	if err != nil {
		return 0, err
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(start)
	if err != nil {
		return d, err
	}
	var out struct {
		Data   json.RawMessage   `json:"data"`
		Errors []json.RawMessage `json:"errors"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || resp.StatusCode != http.StatusOK || len(out.Errors) > 0 || len(out.Data) < 10 {
		return d, fmt.Errorf("graphql: HTTP %d %.300s", resp.StatusCode, raw)
	}
	return d, nil
}
