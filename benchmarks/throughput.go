package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/langs"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
)

// emptyProgram is what an empty sandbox runs: nothing, and exits 0.
var emptyProgram = []string{"/bin/true"}

// runFunc does one run and says how its sandbox was started, if known.
type runFunc func(ctx context.Context) (start string, d time.Duration, err error)

// measureRate keeps conc runs going until dur has passed, lets the last
// ones finish and counts the runs per second over the whole time. A busy
// answer (errBusy) is counted and retried after a short pause; any other
// error stops the measurement.
func measureRate(ctx context.Context, conc int, dur time.Duration, once runFunc) (report.Throughput, error) {
	return measureLoop(ctx, conc, dur, false, once)
}

// measureLoop is the closed loop behind every rate of the bench: conc
// clients, each starting its next run when its last one ends, until dur
// has passed. A busy answer is counted and retried after the pause it
// asks for (Retry-After, at most busyPauseMax; busyPause without one).
// With keepGoing a failed run is counted too and the loop goes on;
// without, the first one stops it and is returned.
func measureLoop(ctx context.Context, conc int, dur time.Duration, keepGoing bool, once runFunc) (report.Throughput, error) {
	t := report.Throughput{Concurrency: conc, Starts: map[string]int{}, BusyByStatus: map[int]int{}}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	begin := time.Now()
	for range conc {
		wg.Go(func() {
			var first time.Time // the current run's first attempt
			answered := 0
			defer func() {
				mu.Lock()
				defer mu.Unlock()
				if !first.IsZero() {
					t.Unanswered = append(t.Unanswered, time.Since(first))
				}
				if answered == 0 {
					t.Starved++
				}
			}()
			for time.Since(begin) < dur && ctx.Err() == nil {
				if first.IsZero() {
					first = time.Now()
				}
				start, d, err := once(ctx)
				mu.Lock()
				var busy errBusy
				pause := time.Duration(0)
				switch {
				case errors.As(err, &busy):
					t.Busy++
					t.BusyByStatus[busy.status]++
					pause = busyPauseFor(busy)
				case err != nil && ctx.Err() != nil:
					// The bench is stopping: not the run's fault.
				case err != nil:
					first = time.Time{}
					t.Errors++
					if firstErr == nil {
						firstErr = err
						t.FirstError = err.Error()
					}
					if !keepGoing {
						cancel()
					}
					pause = busyPause
				default:
					answered++
					t.Runs++
					t.Latencies = append(t.Latencies, d)
					t.Waited = append(t.Waited, time.Since(first))
					first = time.Time{}
					if start != "" {
						t.Starts[start]++
					}
				}
				mu.Unlock()
				if pause > 0 {
					_ = bench.Sleep(ctx, pause)
				}
			}
		})
	}
	wg.Wait()
	t.Elapsed = time.Since(begin)
	if keepGoing {
		return t, nil
	}
	return t, firstErr
}

// Pauses of a client after a busy answer or a failed run.
const (
	busyPause    = 20 * time.Millisecond
	busyPauseMax = 5 * time.Second
)

// busyPauseFor is how long a client waits after a busy answer: its
// Retry-After, capped, else busyPause.
func busyPauseFor(b errBusy) time.Duration {
	if b.retryAfter > 0 {
		return min(b.retryAfter, busyPauseMax)
	}
	return busyPause
}

// paddockRate measures one-shot runs of l's trivial probe against s,
// counting the sandboxes s makes meanwhile by how it makes them.
func (s *server) paddockRate(ctx context.Context, l langs.Lang, conc int, dur time.Duration) (report.Throughput, error) {
	p := l.Probes[0]
	if err := s.awaitFull(ctx, l.Name); err != nil {
		return report.Throughput{}, err
	}
	before, err := s.madeCounts(ctx, l.Name)
	if err != nil {
		return report.Throughput{}, err
	}
	t, err := measureRate(ctx, conc, dur, func(ctx context.Context) (string, time.Duration, error) {
		resp, d, err := s.runOnce(ctx, l.Name, p.Code)
		if err != nil {
			return "", d, err
		}
		if resp.Reason != "ok" || !p.OK(resp.Stdout) {
			return "", d, fmt.Errorf("%s %s: reason %q, stdout %q", l.Name, p.Name, resp.Reason, resp.Stdout)
		}
		return resp.startKind(), d, nil
	})
	t.Lang, t.Target = l.Name, report.TargetPaddock
	if err != nil {
		return t, err
	}
	after, err := s.madeCounts(ctx, l.Name)
	if err != nil {
		return t, err
	}
	t.Made = map[string]int{}
	for k, v := range after {
		if n := v - before[k]; n > 0 {
			t.Made[k] = n
		}
	}
	return t, nil
}

// rawRate measures raw runs of l's trivial probe, each done by once and
// deleted: the rate gVisor itself allows on this machine under Paddock's
// limits.
func rawRate(ctx context.Context, l langs.Lang, target string, conc int, dur time.Duration, once func(ctx context.Context, code string) (rawResult, error)) (report.Throughput, error) {
	p := l.Probes[0]
	t, err := measureRate(ctx, conc, dur, func(ctx context.Context) (string, time.Duration, error) {
		res, err := once(ctx, p.Code)
		if err == nil && !p.OK(res.Stdout) {
			err = fmt.Errorf("%s %s: stdout %q", target, l.Name, res.Stdout)
		}
		return "", res.Total, err
	})
	t.Lang, t.Target = l.Name, target
	return t, err
}
