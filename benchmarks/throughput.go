package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Targets of a throughput measurement.
const (
	targetPaddock    = "paddock one-shot"
	targetRunc       = "paddock one-shot on runc"
	targetRaw        = "raw runsc run+delete"
	targetRawRestore = "raw runsc restore+delete"
)

// throughput is a sustained rate of runs, each on a fresh sandbox.
type throughput struct {
	Lang        string
	Target      string
	Concurrency int
	Elapsed     time.Duration
	Runs        int
	// Busy counts answers that asked to come back later (429, 503).
	Busy int
	// Starts counts the server's start kinds (pool, restore, cold).
	Starts map[string]int
	// Made counts the sandboxes the server made during the measurement,
	// by how (restore, cold), pool refills included.
	Made      map[string]int
	Latencies []time.Duration
}

// rate is the completed runs per second.
func (t throughput) rate() float64 {
	if t.Elapsed <= 0 {
		return 0
	}
	return float64(t.Runs) / t.Elapsed.Seconds()
}

// runFunc does one run and says how its sandbox was started, if known.
type runFunc func(ctx context.Context) (start string, d time.Duration, err error)

// measureRate keeps conc runs going until dur has passed, lets the last
// ones finish and counts the runs per second over the whole time. A busy
// answer (errBusy) is counted and retried after a short pause; any other
// error stops the measurement.
func measureRate(ctx context.Context, conc int, dur time.Duration, once runFunc) (throughput, error) {
	t := throughput{Concurrency: conc, Starts: map[string]int{}}
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
			for time.Since(begin) < dur && ctx.Err() == nil {
				start, d, err := once(ctx)
				mu.Lock()
				var busy errBusy
				switch {
				case errors.As(err, &busy):
					t.Busy++
				case err != nil:
					if firstErr == nil {
						firstErr = err
					}
					cancel()
				default:
					t.Runs++
					t.Latencies = append(t.Latencies, d)
					if start != "" {
						t.Starts[start]++
					}
				}
				mu.Unlock()
				if busy.status != 0 {
					_ = sleep(ctx, 20*time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	t.Elapsed = time.Since(begin)
	return t, firstErr
}

// paddockRate measures one-shot runs of l's trivial probe against s,
// counting the sandboxes s makes meanwhile by how it makes them.
func (s *server) paddockRate(ctx context.Context, l lang, conc int, dur time.Duration) (throughput, error) {
	p := l.probes[0]
	if err := s.awaitFull(ctx, l.name); err != nil {
		return throughput{}, err
	}
	before, err := s.madeCounts(ctx, l.name)
	if err != nil {
		return throughput{}, err
	}
	t, err := measureRate(ctx, conc, dur, func(ctx context.Context) (string, time.Duration, error) {
		resp, d, err := s.runOnce(ctx, l.name, p.code)
		if err != nil {
			return "", d, err
		}
		if resp.Reason != "ok" || !p.ok(resp.Stdout) {
			return "", d, fmt.Errorf("%s %s: reason %q, stdout %q", l.name, p.name, resp.Reason, resp.Stdout)
		}
		return resp.startKind(), d, nil
	})
	t.Lang, t.Target = l.name, targetPaddock
	if err != nil {
		return t, err
	}
	after, err := s.madeCounts(ctx, l.name)
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
func rawRate(ctx context.Context, l lang, target string, conc int, dur time.Duration, once func(ctx context.Context, code string) (rawResult, error)) (throughput, error) {
	p := l.probes[0]
	t, err := measureRate(ctx, conc, dur, func(ctx context.Context) (string, time.Duration, error) {
		res, err := once(ctx, p.code)
		if err == nil && !p.ok(res.Stdout) {
			err = fmt.Errorf("%s %s: stdout %q", target, l.name, res.Stdout)
		}
		return "", res.Total, err
	})
	t.Lang, t.Target = l.name, target
	return t, err
}
